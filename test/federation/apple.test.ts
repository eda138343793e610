import { createHash, generateKeyPairSync, randomBytes } from "node:crypto";
import { decodeProtectedHeader, jwtVerify } from "jose";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { appleClientSecret, appleFirstSignInName } from "~/.server/federation/apple";
import { adminApi, obtainAdminTokens } from "../support/admin-api";
import { startTestPorta, type TestPorta } from "../support/porta";
import { createTenant } from "../login/helpers";

/**
 * Sign in with Apple (decision 055): what can be proved without Apple itself. The provider's
 * configuration (team id, key id, the .p8 key as its write-only secret), the client-secret JWT
 * made from them, the cross-site form post Apple answers with at the callback, and the name
 * Apple posts on the first sign-in. The exchange with appleid.apple.com is not tested here.
 */
const p8 = () => generateKeyPairSync("ec", { namedCurve: "P-256" });
const pem = (key: ReturnType<typeof p8>) => key.privateKey.export({ format: "pem", type: "pkcs8" }).toString();

describe("federation: Sign in with Apple", () => {
  let porta: TestPorta;
  let api: ReturnType<typeof adminApi>;

  beforeAll(async () => {
    porta = await startTestPorta();
    api = adminApi(porta, (await obtainAdminTokens(porta)).accessToken);
  });
  afterAll(async () => {
    await porta.stop();
  });

  it("keeps team id, key id and the .p8 key (write-only), with Apple's issuer and scopes, and refuses what is not a P-256 key", async () => {
    const tenant = await createTenant(porta);
    const key = pem(p8());
    const body = { organizationId: tenant.org.id, kind: "apple", name: "Apple", clientId: "com.example.web", teamId: "ABCDE12345", keyId: "KEY1234567", clientSecret: key };
    const created = await api.post<Record<string, unknown>>("/identity-providers", body);
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    expect(created.body).toMatchObject({ kind: "apple", issuer: "https://appleid.apple.com", scopes: ["openid", "email", "name"], teamId: "ABCDE12345", keyId: "KEY1234567", hasClientSecret: true });
    expect(JSON.stringify(created.body)).not.toContain("PRIVATE KEY");
    const entries = await porta.services.db.prisma.auditEntry.findMany({ where: { organizationId: tenant.org.id } });
    expect(JSON.stringify(entries)).not.toContain("PRIVATE KEY");

    const fields = async (extra: Record<string, unknown>) => {
      const res = await api.post<{ error: { details: Array<{ field: string }> } }>("/identity-providers", { ...body, name: `Apple ${randomBytes(2).toString("hex")}`, ...extra });
      expect(res.status, JSON.stringify(res.body)).toBe(422);
      return res.body.error.details.map((d) => d.field);
    };
    const rsa = generateKeyPairSync("rsa", { modulusLength: 2048 }).privateKey.export({ format: "pem", type: "pkcs8" }).toString();
    expect(await fields({ clientSecret: rsa })).toEqual(["clientSecret"]);
    expect(await fields({ clientSecret: "not a key" })).toEqual(["clientSecret"]);
    expect(await fields({ teamId: undefined })).toContain("teamId");
    expect(await fields({ kind: "oidc", issuer: "https://sso.example.com", clientSecret: "s" })).toEqual(expect.arrayContaining(["teamId", "keyId"]));
    const etag = (await api.get(`/identity-providers/${String(created.body.id)}`)).headers.get("etag")!;
    const removed = await api.put<{ error: { details: Array<{ field: string }> } }>(`/identity-providers/${String(created.body.id)}`, { clientSecret: null }, { "if-match": etag });
    expect(removed.status).toBe(422);
    expect(removed.body.error.details.map((d) => d.field)).toEqual(["clientSecret"]);
  });

  it("makes the client secret an ES256 JWT: kid = key id, iss = team, sub = Services ID, aud = Apple, an hour long", async () => {
    const key = p8();
    const now = new Date();
    const jwt = await appleClientSecret({ pem: pem(key), teamId: "ABCDE12345", keyId: "KEY1234567", clientId: "com.example.web", now });
    expect(decodeProtectedHeader(jwt)).toEqual({ alg: "ES256", kid: "KEY1234567" });
    const { payload } = await jwtVerify(jwt, key.publicKey, { algorithms: ["ES256"], issuer: "ABCDE12345", audience: "https://appleid.apple.com", subject: "com.example.web" });
    expect(payload.exp! - payload.iat!).toBe(3600);
    await expect(jwtVerify(jwt, p8().publicKey, { algorithms: ["ES256"] })).rejects.toThrow();
  });

  it("takes Apple's cross-site form post at the callback and sends the browser on with the answer and the first sign-in's name", async () => {
    const tenant = await createTenant(porta);
    const callback = `${porta.baseUrl}/${tenant.org.slug}/federation/callback`;
    const postFromApple = (form: Record<string, string>) =>
      fetch(callback, {
        method: "POST",
        redirect: "manual",
        headers: { origin: "https://appleid.apple.com", "content-type": "application/x-www-form-urlencoded" },
        body: new URLSearchParams(form).toString(),
      });
    // An unknown state: the page that says so, not the edge's cross-origin refusal.
    const unknown = await postFromApple({ code: "c", state: "unknown-state" });
    expect(unknown.status).toBe(400);
    expect(unknown.headers.get("content-type")).toContain("text/html");

    const state = randomBytes(32).toString("base64url");
    const uid = `uid-${randomBytes(6).toString("hex")}`;
    const pending = { uid, organizationId: tenant.org.id, providerId: crypto.randomUUID(), nonce: "n", verifier: "v" };
    await porta.services.store.set(`federation:state:${createHash("sha256").update(state).digest("hex")}`, JSON.stringify(pending), 600);
    const user = JSON.stringify({ name: { firstName: "Tim", lastName: "Apple" }, email: "x@privaterelay.appleid.com" });
    const known = await postFromApple({ code: "the-code", state, user });
    expect(known.status).toBe(303);
    const next = new URL(known.headers.get("location")!, porta.baseUrl);
    expect(next.pathname).toBe(`/interaction/${uid}/federated/return`);
    expect(Object.fromEntries(next.searchParams)).toEqual({ code: "the-code", state, user });

    // Other pages still refuse a post from another origin.
    const elsewhere = await fetch(`${porta.baseUrl}/${tenant.org.slug}/reset-password`, {
      method: "POST",
      redirect: "manual",
      headers: { origin: "https://appleid.apple.com", "content-type": "application/x-www-form-urlencoded" },
      body: "a=b",
    });
    expect(elsewhere.status).toBe(403);
  });

  it("reads the name Apple posts once, and nothing from a malformed one", () => {
    expect(appleFirstSignInName(JSON.stringify({ name: { firstName: " Tim ", lastName: "Apple" } }))).toEqual({ givenName: "Tim", familyName: "Apple" });
    expect(appleFirstSignInName(null)).toEqual({ givenName: null, familyName: null });
    expect(appleFirstSignInName("{not json")).toEqual({ givenName: null, familyName: null });
    expect(appleFirstSignInName(JSON.stringify({ name: { firstName: 3 } }))).toEqual({ givenName: null, familyName: null });
  });
});
