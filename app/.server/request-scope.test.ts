import { setTimeout as sleep } from "node:timers/promises";
import { describe, expect, it } from "vitest";
import { inRequestScope, requestScope } from "./request-scope";

describe("request scope", () => {
  it("adds to the scope around it for the inner call only, across awaits", async () => {
    expect(requestScope()).toBeUndefined();
    await inRequestScope({ requestId: "outer" }, async () => {
      await inRequestScope({ userinfo: true }, async () => {
        await sleep(1);
        expect(requestScope()).toEqual({ requestId: "outer", userinfo: true });
      });
      expect(requestScope()).toEqual({ requestId: "outer" });
    });
    expect(requestScope()).toBeUndefined();
  });

  it("keeps concurrent requests apart", async () => {
    const seen = await Promise.all(
      ["a", "b", "c"].map((requestId, i) =>
        inRequestScope({ requestId }, async () => {
          await sleep(3 - i);
          return requestScope()?.requestId;
        }),
      ),
    );
    expect(seen).toEqual(["a", "b", "c"]);
  });
});
