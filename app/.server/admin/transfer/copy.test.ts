import { describe, expect, it } from "vitest";
import { copiedClientId } from "./copy";

describe("client ids of a copy", () => {
  it("are UUIDs, the same for the same target and original, different for another target or original", () => {
    const id = copiedClientId("acme-staging", "0193a1b2-0000-7000-8000-000000000001");
    expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-8[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(copiedClientId("acme-staging", "0193a1b2-0000-7000-8000-000000000001")).toBe(id);
    expect(copiedClientId("acme-test", "0193a1b2-0000-7000-8000-000000000001")).not.toBe(id);
    expect(copiedClientId("acme-staging", "0193a1b2-0000-7000-8000-000000000002")).not.toBe(id);
  });
});
