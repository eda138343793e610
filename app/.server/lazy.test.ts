import { describe, expect, it } from "vitest";
import { onFirstUse } from "./lazy";

describe("onFirstUse", () => {
  it("loads once for all callers, and again after a failed load", async () => {
    let calls = 0;
    const load = onFirstUse(async () => {
      calls += 1;
      if (calls === 1) throw new Error("disk busy");
      return { loaded: calls };
    });
    await expect(load()).rejects.toThrow("disk busy");
    const [a, b] = await Promise.all([load(), load()]);
    expect(a).toBe(b);
    expect(await load()).toEqual({ loaded: 2 });
    expect(calls).toBe(2);
  });
});
