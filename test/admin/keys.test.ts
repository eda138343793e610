import { createRemoteJWKSet, decodeProtectedHeader, jwtVerify, type JWK } from "jose";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { adminApi, obtainAdminTokens } from "../support/admin-api";
import { createUser } from "../support/factories";
import { startTestPorta, TEST_ADMIN, type TestPorta } from "../support/porta";
import { createTenant, dataFingerprint, expect422, expectError, PASSWORD, signIn, unique, userinfoStatus, type Tenant } from "./helpers";

/**
 * Signing keys in the Admin API: the list shows public parts only, generate stages a key that
 * is published but does not sign, rotate makes the staged key sign new tokens while tokens
 * signed by the previous key keep verifying (JWKS, userinfo) during its retiring period.
 */
interface Key {
  kid: string;
  alg: "ES256";
  status: "staged" | "active" | "retiring" | "retired";
  createdAt: string;
  retireAfter: string | null;
  retiredAt: string | null;
  publicJwk: JWK;
}

let porta: TestPorta;
let api: ReturnType<typeof adminApi>;
let adminId: string;
let tenant: Tenant;
let email: string;

beforeAll(async () => {
  porta = await startTestPorta();
  api = adminApi(porta, (await obtainAdminTokens(porta)).accessToken);
  adminId = (await porta.services.db.prisma.user.findFirstOrThrow({ where: { email: TEST_ADMIN.email } })).id;
  tenant = await createTenant(porta);
  email = (await createUser(porta.services.db.prisma, tenant.org.id, { email: `${unique("k")}@example.com`, password: PASSWORD })).email;
});
afterAll(async () => {
  await porta?.stop();
});

const PRIVATE_JWK_MEMBERS = ["d", "p", "q", "dp", "dq", "qi", "k", "oth"];

/** Fails if any object anywhere in the body has a private JWK member or an encrypted private key. */
function expectNoPrivateParts(body: unknown) {
  const walk = (value: unknown, path: string) => {
    if (Array.isArray(value)) value.forEach((v, i) => walk(v, `${path}[${i}]`));
    else if (value && typeof value === "object") {
      for (const [key, v] of Object.entries(value)) {
        expect(PRIVATE_JWK_MEMBERS, `${path}.${key}`).not.toContain(key);
        expect(key.toLowerCase(), `${path}.${key}`).not.toContain("private");
        walk(v, `${path}.${key}`);
      }
    }
  };
  walk(body, "body");
}

function expectPublicKey(key: Key) {
  expect(Object.keys(key.publicJwk).sort()).toEqual(["alg", "crv", "kid", "kty", "use", "x", "y"]);
  expect(key.publicJwk).toMatchObject({ kty: "EC", crv: "P-256", alg: "ES256", use: "sig", kid: key.kid });
}

async function jwks(): Promise<JWK[]> {
  const body = (await (await fetch(`${tenant.issuer}/.well-known/jwks`)).json()) as { keys: JWK[] };
  return body.keys;
}

const kidOf = (jwt: string) => decodeProtectedHeader(jwt).kid!;
const listKeys = async () => (await api.get<{ data: Key[] }>("/keys")).body.data;
const verifyIdToken = (idToken: string) =>
  jwtVerify(idToken, createRemoteJWKSet(new URL(`${tenant.issuer}/.well-known/jwks`)), { issuer: tenant.issuer, audience: tenant.clientId, algorithms: ["ES256"] });

describe("keys", () => {
  it("lists the signing keys with their public parts only", async () => {
    const res = await api.get<{ data: Key[] }>("/keys");
    expect(res.status).toBe(200);
    expect(res.body.data).toHaveLength(1);
    const [key] = res.body.data;
    expect(key).toEqual({
      kid: expect.any(String),
      alg: "ES256",
      status: "active",
      createdAt: expect.any(String),
      retireAfter: null,
      retiredAt: null,
      publicJwk: expect.any(Object),
    });
    expectPublicKey(key!);
    expectNoPrivateParts(res.body);
    // The published JWKS holds the same public key.
    expect(await jwks()).toEqual([key!.publicJwk]);
    const session = await signIn(tenant, { email, password: PASSWORD });
    expect(kidOf(session.idToken!)).toBe(key!.kid);
  });

  it("generate stages a key: published at once, not signing; rotate makes it sign while the old key's tokens keep working", async () => {
    const prisma = porta.services.db.prisma;
    const [active] = (await listKeys()).filter((k) => k.status === "active");
    const before = await signIn(tenant, { email, password: PASSWORD });
    expect(kidOf(before.idToken!)).toBe(active!.kid);

    const generated = await api.post<Key>("/keys");
    expect(generated.status).toBe(201);
    expect(generated.body).toEqual({ ...generated.body, alg: "ES256", status: "staged", retireAfter: null, retiredAt: null });
    expectPublicKey(generated.body);
    expectNoPrivateParts(generated.body);
    const staged = generated.body.kid;
    expect((await jwks()).map((k) => k.kid).sort()).toEqual([active!.kid, staged].sort());
    // Staged: still the active key signs.
    const meanwhile = await signIn(tenant, { email, password: PASSWORD });
    expect(kidOf(meanwhile.idToken!)).toBe(active!.kid);
    expect(await prisma.auditEntry.findFirstOrThrow({ where: { eventType: "key.generated", targetId: staged } })).toMatchObject({
      actorType: "admin",
      actorId: adminId,
      targetType: "signing_key",
      data: { status: "staged" },
    });

    const rotated = await api.post<Key>("/keys/rotate");
    expect(rotated.status).toBe(200);
    expect(rotated.body).toMatchObject({ kid: staged, status: "active", retireAfter: null });
    expectNoPrivateParts(rotated.body);
    const list = await listKeys();
    expectNoPrivateParts(list);
    const old = list.find((k) => k.kid === active!.kid)!;
    expect(old.status).toBe("retiring");
    // Retiring until every token it signed has expired (the longest lifetime plus clock skew).
    expect(Date.parse(old.retireAfter!)).toBeGreaterThan(Date.now() + 60_000);
    expect(old.retiredAt).toBeNull();
    expect(list.find((k) => k.kid === staged)!.status).toBe("active");

    // New tokens carry the new kid; the JWKS publishes the new key first and still the old one.
    const after = await signIn(tenant, { email, password: PASSWORD });
    expect(kidOf(after.idToken!)).toBe(staged);
    const published = (await jwks()).map((k) => k.kid);
    expect(published[0]).toBe(staged);
    expect(published).toContain(active!.kid);
    // Tokens signed by the previous key still verify and still work.
    expect((await verifyIdToken(before.idToken!)).payload.iss).toBe(tenant.issuer);
    expect((await verifyIdToken(after.idToken!)).payload.iss).toBe(tenant.issuer);
    expect(await userinfoStatus(tenant, before.accessToken)).toBe(200);
    expect(await userinfoStatus(tenant, meanwhile.accessToken)).toBe(200);
    // The admin's own token, signed by the old key, still opens the Admin API.
    expect((await api.get("/keys")).status).toBe(200);
    expect(await prisma.auditEntry.findFirstOrThrow({ where: { eventType: "key.rotated", targetId: staged } })).toMatchObject({
      actorType: "admin",
      actorId: adminId,
      targetType: "signing_key",
    });
  });

  it("rotate without a staged key creates a fresh key; a retiring key whose time is up leaves the JWKS", async () => {
    const prisma = porta.services.db.prisma;
    const [active] = (await listKeys()).filter((k) => k.status === "active");
    const known = new Set((await listKeys()).map((k) => k.kid));
    const rotated = await api.post<Key>("/keys/rotate");
    expect(rotated.status).toBe(200);
    expect(known.has(rotated.body.kid)).toBe(false);
    expect(rotated.body.status).toBe("active");
    expect(kidOf((await signIn(tenant, { email, password: PASSWORD })).idToken!)).toBe(rotated.body.kid);

    // The retiring period of the earlier keys ends: they are retired and no longer published,
    // and what they signed no longer verifies, the admin's first token included.
    const oldApi = api;
    api = adminApi(porta, (await obtainAdminTokens(porta)).accessToken);
    await prisma.signingKey.updateMany({ where: { status: "retiring" }, data: { retireAfter: new Date(Date.now() - 1000) } });
    expectError(await oldApi.get("/keys"), 401, "unauthorized");
    const list = await listKeys();
    expect(list.find((k) => k.kid === active!.kid)).toMatchObject({ status: "retired", retiredAt: expect.any(String) });
    expect(list.filter((k) => k.status === "active").map((k) => k.kid)).toEqual([rotated.body.kid]);
    expect((await jwks()).map((k) => k.kid)).toEqual([rotated.body.kid]);
  });

  it("takes no input: 422 for a parameter or body field, nothing written", async () => {
    const before = await dataFingerprint(porta);
    const keysBefore = await listKeys();
    expect422(await api.get("/keys?status=active"), "query.status");
    expect422(await api.post("/keys", { alg: "RS256" }), "alg");
    expect422(await api.post("/keys", { d: "x".repeat(5000) }), "d");
    expect422(await api.post("/keys", ["x"]), "body");
    expect422(await api.post("/keys/rotate", { kid: keysBefore[0]!.kid }), "kid");
    expect422(await api.post("/keys/rotate?force=true"), "query.force");
    expect(await dataFingerprint(porta)).toEqual(before);
    expect(await listKeys()).toEqual(keysBefore);
  });

  it("needs admin:key:read to list and admin:key:write to generate or rotate", async () => {
    const prisma = porta.services.db.prisma;
    const withoutPermission = async (permission: string, check: () => Promise<void>) => {
      const link = await prisma.rolePermission.findFirstOrThrow({ where: { role: { name: "service-admin" }, permission: { name: permission } } });
      await prisma.rolePermission.delete({ where: { roleId_permissionId: { roleId: link.roleId, permissionId: link.permissionId } } });
      try {
        await check();
      } finally {
        await prisma.rolePermission.create({ data: link });
      }
    };
    const keysBefore = await listKeys();
    await withoutPermission("admin:key:read", async () => {
      expectError(await api.get("/keys"), 403, "forbidden");
    });
    await withoutPermission("admin:key:write", async () => {
      expectError(await api.post("/keys"), 403, "forbidden");
      expectError(await api.post("/keys/rotate"), 403, "forbidden");
      expect((await api.get("/keys")).status).toBe(200);
    });
    expect(await listKeys()).toEqual(keysBefore);
    expectError(await adminApi(porta, undefined).get("/keys"), 401, "unauthorized");
    expectError(await adminApi(porta, undefined).post("/keys/rotate"), 401, "unauthorized");
  });
});
