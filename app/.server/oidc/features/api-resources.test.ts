import { describe, expect, it } from "vitest";
import { grantedScopesOf } from "./api-resources";

const resource = {
  identifier: "https://api.example.com",
  scopes: ["orders:read", "orders:write"],
  accessTokenTtlSeconds: null,
  consentRequired: true,
  openToDynamicClients: false,
  // As the tenant statement's json_object_agg arrives: a plain object keyed by client id.
  grants: JSON.parse('{"client-a":["orders:read","gone:scope"]}') as Record<string, string[]>,
};

describe("the scopes a client was granted for a resource", () => {
  it("are the granted ones the resource still defines", () => {
    expect(grantedScopesOf(resource, "client-a")).toEqual(["orders:read"]);
  });

  it("are none for a client without a grant, whatever its id names on an object", () => {
    for (const id of ["client-b", "constructor", "toString", "__proto__", "hasOwnProperty"]) expect(grantedScopesOf(resource, id), id).toBeUndefined();
  });

  it("are every scope of a resource open to dynamically registered clients, for such a client only", () => {
    const open = { ...resource, openToDynamicClients: true };
    expect(grantedScopesOf(open, "registered", true)).toEqual(["orders:read", "orders:write"]);
    expect(grantedScopesOf(open, "registered", false)).toBeUndefined();
    expect(grantedScopesOf(resource, "registered", true)).toBeUndefined();
    // An administrator's grant still decides for a client that has one.
    expect(grantedScopesOf(open, "client-a", true)).toEqual(["orders:read"]);
  });
});
