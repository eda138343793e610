import { describe, expect, it } from "vitest";
import { adminTokenClientId } from "./admin-token";

/** The claims that make a verified token one meant for the Admin API (decision 017). */
const RESOURCE = "https://id.example.com/api/admin";
const header = { alg: "ES256", typ: "at+jwt" };
const payload = { aud: RESOURCE, client_id: "porta-admin", scope: "openid profile email roles offline_access" };

describe("adminTokenClientId", () => {
  it("names the client of an access token for the Admin API with every admin scope", () => {
    expect(adminTokenClientId(header, payload, RESOURCE)).toBe("porta-admin");
    expect(adminTokenClientId({ ...header, typ: "application/at+jwt" }, payload, RESOURCE)).toBe("porta-admin");
    expect(adminTokenClientId(header, { ...payload, aud: ["https://other.example", RESOURCE] }, RESOURCE)).toBe("porta-admin");
  });

  it("refuses an ID token or a JWT without a type", () => {
    expect(adminTokenClientId({ ...header, typ: "JWT" }, payload, RESOURCE)).toBeUndefined();
    expect(adminTokenClientId({ alg: "ES256" }, payload, RESOURCE)).toBeUndefined();
  });

  it("refuses another audience, such as the organization's issuer, or none", () => {
    expect(adminTokenClientId(header, { ...payload, aud: "https://id.example.com/porta-admin" }, RESOURCE)).toBeUndefined();
    expect(adminTokenClientId(header, { ...payload, aud: [`${RESOURCE}/`] }, RESOURCE)).toBeUndefined();
    expect(adminTokenClientId(header, { ...payload, aud: undefined }, RESOURCE)).toBeUndefined();
  });

  it("refuses a token that lacks one of the admin scopes", () => {
    for (const scope of ["openid", "openid profile email", "profile email roles", "openid profile email role", ""]) {
      expect(adminTokenClientId(header, { ...payload, scope }, RESOURCE), scope).toBeUndefined();
    }
    expect(adminTokenClientId(header, { aud: RESOURCE, client_id: "porta-admin" }, RESOURCE)).toBeUndefined();
  });

  it("refuses a token that names no client", () => {
    expect(adminTokenClientId(header, { ...payload, client_id: undefined }, RESOURCE)).toBeUndefined();
    expect(adminTokenClientId(header, { ...payload, client_id: "" }, RESOURCE)).toBeUndefined();
    expect(adminTokenClientId(header, { ...payload, client_id: 42 }, RESOURCE)).toBeUndefined();
  });
});
