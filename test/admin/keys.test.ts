import { createRemoteJWKSet, decodeJwt, decodeProtectedHeader, importJWK, jwtVerify, SignJWT, type JWK } from "jose";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { adminApi, obtainAdminTokens } from "../support/admin-api";
import { createClient, createUser } from "../support/factories";
import { startTestPorta, TEST_ADMIN, type TestPorta } from "../support/porta";
import { createTenant, dataFingerprint, expect422, expectError, PASSWORD, signIn, unique, userinfoStatus, type Tenant } from "./helpers";

/**
 * Signing keys in the Admin API, per organization: the lists show public parts only, generate
 * stages a key that the organization's JWKS publishes but that does not sign, rotate makes the
 * staged key sign new tokens while tokens signed by the previous key keep verifying (JWKS,
 * userinfo) during its retiring period; nothing of it reaches another organization. Operators
 * can still rotate every organization at once.
 */
interface Key {
  kid: string;
  alg: "ES256";
  status: "staged" | "active" | "retiring" | "retired";
  organizationId: string | null;
  createdAt: string;
  retireAfter: string | null;
  retiredAt: string | null;
  publicJwk: JWK;
}
interface KeyPage {
  data: Key[];
  total: number;
  page: number;
  pageSize: number;
  cursor?: string;
}

const UNKNOWN_ORG = "0190a000-0000-7000-8000-000000000000";

let porta: TestPorta;
let api: ReturnType<typeof adminApi>;
let adminToken: string;
let adminId: string;
let adminOrgId: string;
let tenant: Tenant;
let other: Tenant;
let email: string;

beforeAll(async () => {
  porta = await startTestPorta();
  adminToken = (await obtainAdminTokens(porta)).accessToken;
  api = adminApi(porta, adminToken);
  adminId = (await porta.services.db.prisma.user.findFirstOrThrow({ where: { email: TEST_ADMIN.email } })).id;
  adminOrgId = porta.bootstrap.organizationId;
  tenant = await createTenant(porta);
  other = await createTenant(porta);
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

async function jwks(of: Tenant = tenant): Promise<JWK[]> {
  const body = (await (await fetch(`${of.issuer}/.well-known/jwks`)).json()) as { keys: JWK[] };
  return body.keys;
}

const kidOf = (jwt: string) => decodeProtectedHeader(jwt).kid!;
const keysOf = (orgId: string) => `/organizations/${orgId}/keys`;
const listKeys = async (orgId = tenant.org.id) => (await api.get<{ data: Key[] }>(keysOf(orgId))).body.data;
const activeKid = async (orgId: string) => (await listKeys(orgId)).find((k) => k.status === "active")!.kid;
const verifyIdToken = (idToken: string) =>
  jwtVerify(idToken, createRemoteJWKSet(new URL(`${tenant.issuer}/.well-known/jwks`)), { issuer: tenant.issuer, audience: tenant.clientId, algorithms: ["ES256"] });

/** The admin's access token with the same claims, signed by another key (what a forger holding that key could send). */
async function resignedAdminToken(jwk: JWK & { kid: string }) {
  const { typ } = decodeProtectedHeader(adminToken);
  return new SignJWT(decodeJwt(adminToken))
    .setProtectedHeader({ alg: "ES256", kid: jwk.kid, ...(typ ? { typ } : {}) })
    .sign(await importJWK(jwk, "ES256"));
}

describe("keys of one organization", () => {
  it("lists the organization's signing keys with their public parts only", async () => {
    const res = await api.get<{ data: Key[] }>(keysOf(tenant.org.id));
    expect(res.status).toBe(200);
    expect(res.body.data).toHaveLength(1);
    const [key] = res.body.data;
    expect(key).toEqual({
      kid: expect.any(String),
      alg: "ES256",
      status: "active",
      organizationId: tenant.org.id,
      createdAt: expect.any(String),
      retireAfter: null,
      retiredAt: null,
      publicJwk: expect.any(Object),
    });
    expectPublicKey(key!);
    expectNoPrivateParts(res.body);
    // The organization's JWKS holds the same public key, and only it.
    expect(await jwks()).toEqual([key!.publicJwk]);
    const session = await signIn(tenant, { email, password: PASSWORD });
    expect(kidOf(session.idToken!)).toBe(key!.kid);
    // Another organization and the super-admin organization have keys of their own.
    const others = [...(await listKeys(other.org.id)), ...(await listKeys(adminOrgId))];
    expect(others.map((k) => k.status)).toEqual(["active", "active"]);
    expect(others.map((k) => k.kid)).not.toContain(key!.kid);
    expect(new Set(others.map((k) => k.kid)).size).toBe(2);
  });

  it("generate stages a key: published at once, not signing; rotate makes it sign while the old key's tokens keep working", async () => {
    const prisma = porta.services.db.prisma;
    const [active] = (await listKeys()).filter((k) => k.status === "active");
    const otherJwks = await jwks(other);
    const before = await signIn(tenant, { email, password: PASSWORD });
    expect(kidOf(before.idToken!)).toBe(active!.kid);

    const generated = await api.post<Key>(keysOf(tenant.org.id));
    expect(generated.status).toBe(201);
    expect(generated.body).toEqual({ ...generated.body, alg: "ES256", status: "staged", organizationId: tenant.org.id, retireAfter: null, retiredAt: null });
    expectPublicKey(generated.body);
    expectNoPrivateParts(generated.body);
    const staged = generated.body.kid;
    expect((await jwks()).map((k) => k.kid).sort()).toEqual([active!.kid, staged].sort());
    expect(await jwks(other)).toEqual(otherJwks);
    // Staged: still the active key signs.
    const meanwhile = await signIn(tenant, { email, password: PASSWORD });
    expect(kidOf(meanwhile.idToken!)).toBe(active!.kid);
    expect(await prisma.auditEntry.findFirstOrThrow({ where: { eventType: "key.generated", targetId: staged } })).toMatchObject({
      actorType: "admin",
      actorId: adminId,
      organizationId: tenant.org.id,
      targetType: "signing_key",
      data: { status: "staged" },
    });

    const rotated = await api.post<Key>(`${keysOf(tenant.org.id)}/rotate`);
    expect(rotated.status).toBe(200);
    expect(rotated.body).toMatchObject({ kid: staged, status: "active", organizationId: tenant.org.id, retireAfter: null });
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
    // Nothing of it reached the other organization.
    expect(await jwks(other)).toEqual(otherJwks);
    expect((await api.get("/keys")).status).toBe(200);
    expect(await prisma.auditEntry.findFirstOrThrow({ where: { eventType: "key.rotated", targetId: staged } })).toMatchObject({
      actorType: "admin",
      actorId: adminId,
      organizationId: tenant.org.id,
      targetType: "signing_key",
    });
  });

  it("rotate without a staged key creates a fresh key; a retiring key whose time is up leaves the JWKS", async () => {
    const prisma = porta.services.db.prisma;
    const [active] = (await listKeys()).filter((k) => k.status === "active");
    const known = new Set((await listKeys()).map((k) => k.kid));
    const rotated = await api.post<Key>(`${keysOf(tenant.org.id)}/rotate`);
    expect(rotated.status).toBe(200);
    expect(known.has(rotated.body.kid)).toBe(false);
    expect(rotated.body.status).toBe("active");
    expect(kidOf((await signIn(tenant, { email, password: PASSWORD })).idToken!)).toBe(rotated.body.kid);

    // The retiring period of the earlier keys ends: they are retired and no longer published.
    await prisma.signingKey.updateMany({ where: { organizationId: tenant.org.id, status: "retiring" }, data: { retireAfter: new Date(Date.now() - 1000) } });
    const list = await listKeys();
    expect(list.find((k) => k.kid === active!.kid)).toMatchObject({ status: "retired", retiredAt: expect.any(String) });
    expect(list.filter((k) => k.status === "active").map((k) => k.kid)).toEqual([rotated.body.kid]);
    expect((await jwks()).map((k) => k.kid)).toEqual([rotated.body.kid]);
  });

  it("rotates the super-admin organization's key: the admin's token keeps working while the old key retires, then stops", async () => {
    const prisma = porta.services.db.prisma;
    const oldKid = await activeKid(adminOrgId);
    expect(kidOf(adminToken)).toBe(oldKid);
    const rotated = await api.post<Key>(`${keysOf(adminOrgId)}/rotate`);
    expect(rotated.status).toBe(200);
    expect(rotated.body.organizationId).toBe(adminOrgId);
    // The admin's own token, signed by the old key, still opens the Admin API.
    expect((await api.get(keysOf(adminOrgId))).status).toBe(200);

    // A new admin token carries the new kid; once the old key's time is up, the first token no longer verifies.
    const oldApi = api;
    adminToken = (await obtainAdminTokens(porta)).accessToken;
    api = adminApi(porta, adminToken);
    expect(kidOf(adminToken)).toBe(rotated.body.kid);
    await prisma.signingKey.updateMany({ where: { organizationId: adminOrgId, status: "retiring" }, data: { retireAfter: new Date(Date.now() - 1000) } });
    expect((await listKeys(adminOrgId)).find((k) => k.kid === oldKid)?.status).toBe("retired");
    expectError(await oldApi.get("/keys"), 401, "unauthorized");
    expect((await api.get("/keys")).status).toBe(200);
  });

  it("verifies admin tokens against the super-admin organization's keys only", async () => {
    const [tenantKey] = await porta.services.keys.providerJwks(tenant.org.id);
    const [adminKey] = await porta.services.keys.providerJwks(adminOrgId);
    expect(tenantKey!.kid).not.toBe(adminKey!.kid);
    // The same claims signed by the super-admin organization's key pass; signed by a tenant's key they do not.
    expect((await adminApi(porta, await resignedAdminToken(adminKey!)).get("/keys")).status).toBe(200);
    expectError(await adminApi(porta, await resignedAdminToken(tenantKey!)).get("/keys"), 401, "unauthorized");
  });

  it("answers 404 for an unknown or deleted organization and 422 for a malformed id or any input, writing nothing", async () => {
    const prisma = porta.services.db.prisma;
    const deleted = await createTenant(porta);
    await prisma.organization.update({ where: { id: deleted.org.id }, data: { status: "deleted" } });
    const before = await dataFingerprint(porta);
    const keysBefore = await prisma.signingKey.findMany({ orderBy: { id: "asc" } });
    for (const orgId of [UNKNOWN_ORG, deleted.org.id]) {
      expectError(await api.get(keysOf(orgId)), 404, "not_found");
      expectError(await api.post(keysOf(orgId)), 404, "not_found");
      expectError(await api.post(`${keysOf(orgId)}/rotate`), 404, "not_found");
    }
    expect422(await api.get(keysOf("not-a-uuid")), "path.orgId");
    expect422(await api.post(keysOf("not-a-uuid")), "path.orgId");
    expect422(await api.post(`${keysOf("not-a-uuid")}/rotate`), "path.orgId");
    expect422(await api.get(`${keysOf(tenant.org.id)}?status=active`), "query.status");
    expect422(await api.post(keysOf(tenant.org.id), { alg: "RS256" }), "alg");
    expect422(await api.post(keysOf(tenant.org.id), { d: "x".repeat(5000) }), "d");
    expect422(await api.post(keysOf(tenant.org.id), ["x"]), "body");
    expect422(await api.post(`${keysOf(tenant.org.id)}/rotate`, { kid: keysBefore[0]!.id }), "kid");
    expect422(await api.post(`${keysOf(tenant.org.id)}/rotate?force=true`), "query.force");
    expect422(await api.get("/keys?organizationId=not-a-uuid"), "query.organizationId");
    expect422(await api.get("/keys?status=active"), "query.status");
    expect422(await api.get("/keys?cursor=not-a-cursor"), "cursor");
    expect422(await api.post("/keys/rotate", { organizationId: tenant.org.id }), "organizationId");
    expect422(await api.post("/keys/rotate?force=true"), "query.force");
    expect(await dataFingerprint(porta)).toEqual(before);
    expect(await prisma.signingKey.findMany({ orderBy: { id: "asc" } })).toEqual(keysBefore);
    // The route that generated a shared key is gone: a key always belongs to an organization.
    expect((await api.post("/keys")).status).toBe(405);
  });

  it("gives an organization created through the Admin API its active key with its row", async () => {
    const created = await api.post<{ id: string }>("/organizations", { name: "Keyed", slug: unique("keyed") });
    expect(created.status).toBe(201);
    // Read straight from the database, before anything could have created a key lazily.
    const rows = await porta.services.db.prisma.signingKey.findMany({ where: { organizationId: created.body.id } });
    expect(rows.map((r) => r.status)).toEqual(["active"]);
    expect((await listKeys(created.body.id)).map((k) => k.kid)).toEqual([rows[0]!.id]);
  });
});

describe("keys of every organization", () => {
  it("lists every key with its organization, paged, and filters by organization", async () => {
    const all = await api.get<KeyPage>("/keys?pageSize=100");
    expect(all.status).toBe(200);
    expectNoPrivateParts(all.body);
    expect(all.body).toMatchObject({ page: 1, pageSize: 100 });
    expect(all.body.total).toBe(await porta.services.db.prisma.signingKey.count());
    const owners = new Set(all.body.data.map((k) => k.organizationId));
    for (const orgId of [tenant.org.id, other.org.id, adminOrgId]) expect(owners).toContain(orgId);

    const filtered = await api.get<KeyPage>(`/keys?organizationId=${tenant.org.id}`);
    expect(filtered.body.data.length).toBeGreaterThan(1);
    expect(filtered.body.data.every((k) => k.organizationId === tenant.org.id)).toBe(true);
    expect(filtered.body.data.map((k) => k.kid).sort()).toEqual((await listKeys()).map((k) => k.kid).sort());
    expect((await api.get<KeyPage>(`/keys?organizationId=${UNKNOWN_ORG}`)).body).toMatchObject({ data: [], total: 0 });

    // Cursor paging walks every key once.
    const seen: string[] = [];
    let cursor: string | undefined;
    do {
      const page = await api.get<KeyPage>(`/keys?limit=2${cursor ? `&cursor=${cursor}` : ""}`);
      expect(page.status).toBe(200);
      seen.push(...page.body.data.map((k) => k.kid));
      cursor = page.body.cursor;
    } while (cursor);
    expect(seen.sort()).toEqual(all.body.data.map((k) => k.kid).sort());
  });

  it("rotates every organization at once, with one audit entry, and the admin's token keeps working", async () => {
    const prisma = porta.services.db.prisma;
    const organizations = await prisma.organization.count({ where: { status: { not: "deleted" } } });
    const before = new Map<string, string>();
    for (const orgId of [tenant.org.id, other.org.id, adminOrgId]) before.set(orgId, await activeKid(orgId));
    const otherJwks = await jwks(other);

    const res = await api.post<{ rotatedOrganizations: number }>("/keys/rotate");
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ rotatedOrganizations: organizations });
    for (const [orgId, kid] of before) {
      const keys = await listKeys(orgId);
      expect(keys.find((k) => k.kid === kid)?.status, orgId).toBe("retiring");
      const active = keys.filter((k) => k.status === "active");
      expect(active, orgId).toHaveLength(1);
      expect(active[0]!.kid).not.toBe(kid);
    }
    // Every organization still has keys of its own.
    const actives = await prisma.signingKey.findMany({ where: { status: "active" }, select: { id: true, organizationId: true } });
    expect(new Set(actives.map((k) => k.organizationId)).size).toBe(actives.length);
    // The other organization's JWKS: its new key first, then what it published before.
    const otherActive = actives.find((k) => k.organizationId === other.org.id)!.id;
    expect((await jwks(other)).map((k) => k.kid)).toEqual([otherActive, ...otherJwks.map((k) => k.kid)]);

    const audits = await prisma.auditEntry.findMany({ where: { eventType: "key.rotated_all" } });
    expect(audits).toHaveLength(1);
    expect(audits[0]).toMatchObject({ actorType: "admin", actorId: adminId, targetType: "signing_key", data: { organizations } });
    expect((await api.get("/keys")).status).toBe(200);
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
    const keysBefore = await prisma.signingKey.findMany({ orderBy: { id: "asc" } });
    await withoutPermission("admin:key:read", async () => {
      expectError(await api.get("/keys"), 403, "forbidden");
      expectError(await api.get(keysOf(tenant.org.id)), 403, "forbidden");
    });
    await withoutPermission("admin:key:write", async () => {
      expectError(await api.post(keysOf(tenant.org.id)), 403, "forbidden");
      expectError(await api.post(`${keysOf(tenant.org.id)}/rotate`), 403, "forbidden");
      expectError(await api.post("/keys/rotate"), 403, "forbidden");
      expect((await api.get("/keys")).status).toBe(200);
      expect((await api.get(keysOf(tenant.org.id))).status).toBe(200);
    });
    expect(await prisma.signingKey.findMany({ orderBy: { id: "asc" } })).toEqual(keysBefore);
    expectError(await adminApi(porta, undefined).get("/keys"), 401, "unauthorized");
    expectError(await adminApi(porta, undefined).get(keysOf(tenant.org.id)), 401, "unauthorized");
    expectError(await adminApi(porta, undefined).post(`${keysOf(tenant.org.id)}/rotate`), 401, "unauthorized");
    expectError(await adminApi(porta, undefined).post("/keys/rotate"), 401, "unauthorized");
  });
});

describe("a client's own access token lifetime", () => {
  it("keeps a retiring key published until the longest-lived client's tokens have expired (decision 036)", async () => {
    const longLived = await createTenant(porta);
    await createClient(porta.services.db.prisma, longLived.org.id, { grantTypes: ["client_credentials"], redirectUris: [], scope: "email", accessTokenTtlSeconds: 86_400 });
    const before = await activeKid(longLived.org.id);
    expect((await api.post(`${keysOf(longLived.org.id)}/rotate`)).status).toBe(200);
    const retiring = (await listKeys(longLived.org.id)).find((k) => k.kid === before)!;
    expect(retiring.status).toBe("retiring");
    expect(Date.parse(retiring.retireAfter!)).toBeGreaterThanOrEqual(Date.now() + 86_400_000);
  });
});
