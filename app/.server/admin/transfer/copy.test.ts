import { describe, expect, it } from "vitest";
import { asCopy, copiedClientId } from "./copy";

describe("client ids of a copy", () => {
  it("are UUIDs, the same for the same target and original, different for another target or original", () => {
    const id = copiedClientId("acme-staging", "0193a1b2-0000-7000-8000-000000000001");
    expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-8[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(copiedClientId("acme-staging", "0193a1b2-0000-7000-8000-000000000001")).toBe(id);
    expect(copiedClientId("acme-test", "0193a1b2-0000-7000-8000-000000000001")).not.toBe(id);
    expect(copiedClientId("acme-staging", "0193a1b2-0000-7000-8000-000000000002")).not.toBe(id);
  });
});

describe("a copy's API resource grants", () => {
  it("name the copied clients by their new ids", () => {
    const original = "0193a1b2-0000-7000-8000-000000000001";
    const content = {
      clients: [{ id: original, secrets: [{ secretHash: "x" }] }],
      apiResources: [{ identifier: "https://api.example.com", grants: [{ client: original, scopes: ["read"] }] }],
    } as unknown as Parameters<typeof asCopy>[0];
    const copy = asCopy(content, "acme-staging");
    expect(copy.clients[0]!.id).toBe(copiedClientId("acme-staging", original));
    expect(copy.clients[0]!.secrets).toEqual([]);
    expect(copy.apiResources![0]!.grants).toEqual([{ client: copiedClientId("acme-staging", original), scopes: ["read"] }]);
  });
});
