import { randomBytes, randomUUID } from "node:crypto";
import { decodeJwt } from "jose";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PortaAdmin, staticToken } from "@porta/admin-client";
import { adminOperations } from "~/.server/admin/http/operation-table";
import type { OwnedTable } from "~/.server/admin/http/organization-scope";
import type { Operation } from "~/.server/admin/http/route";
import { ORGANIZATION_ADMIN_PERMISSIONS, ORGANIZATION_AUDITOR_PERMISSIONS } from "~/.server/admin/organization-roles";
import { dataFingerprint, type ErrorBody } from "../admin/helpers";
import { adminApi, obtainAdminTokens, type ApiResponse } from "../support/admin-api";
import { fakeDns } from "../support/domains";
import { createUser } from "../support/factories";
import { startTestPorta, type TestPorta } from "../support/porta";
import { createUserInState, type Tenant, type TestUser } from "../two-factor/helpers";
import { administrationToken, createAdministeredTenant, organizationApi, unique } from "./helpers";

/**
 * An organization's own door onto the Admin API (decision 090), driven by the operation table so
 * that an operation added later is covered too: an operation without an organization scope is
 * refused; each scoped one given another organization's ids (path, query, body or a target's
 * owner) answers 404 and writes nothing; given the organization's own ids it runs. Then who gets
 * through the door at all: the organization's administrators, signed in with a second factor.
 */
let porta: TestPorta;
let api: ReturnType<typeof adminApi>;
let tenantA: Tenant;
let tenantB: Tenant;
let adminA: TestUser;
let auditorA: TestUser;
let adminB: TestUser;
let adminTokenA: string;
let auditorTokenA: string;
let adminTokenB: string;
let serviceAdminToken: string;

const TARGET_ELSEWHERE = "The target does not exist.";

async function roleId(organizationId: string, name: string): Promise<string> {
  return (await porta.services.db.prisma.role.findUniqueOrThrow({ where: { organizationId_name: { organizationId, name } } })).id;
}

/** A user of the tenant, enrolled in TOTP, given a role by a service admin through the Admin API. */
async function userWithRole(tenant: Tenant, role: string | null, state: "totp" | "none" = "totp"): Promise<TestUser> {
  const user = await createUserInState(porta, tenant, state);
  if (role) {
    const res = await api.put(`/users/${user.id}/roles/${await roleId(tenant.org.id, role)}`);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
  }
  return user;
}

beforeAll(async () => {
  porta = await startTestPorta({ dnsResolver: fakeDns() });
  serviceAdminToken = (await obtainAdminTokens(porta)).accessToken;
  api = adminApi(porta, serviceAdminToken);
  tenantA = await createAdministeredTenant(porta, api);
  tenantB = await createAdministeredTenant(porta, api);
  adminA = await userWithRole(tenantA, "org-admin");
  auditorA = await userWithRole(tenantA, "org-auditor");
  adminB = await userWithRole(tenantB, "org-admin");
  adminTokenA = await administrationToken(porta, tenantA, adminA);
  auditorTokenA = await administrationToken(porta, tenantA, auditorA);
  adminTokenB = await administrationToken(porta, tenantB, adminB);
}, 120_000);
afterAll(async () => {
  await porta?.stop();
});

// ---------------------------------------------------------------------------------------------
// Targets of one organization, one of each kind a scope can name

type Fixtures = Record<OwnedTable, string> & { organization: string };

async function fixturesOf(tenant: Tenant): Promise<Fixtures> {
  const prisma = porta.services.db.prisma;
  const organizationId = tenant.org.id;
  const hex = randomBytes(4).toString("hex");
  const user = await createUser(prisma, organizationId);
  const [role, permission, identityProvider, organizationDomain, scimToken, invitation, auditEntry, setupLink] = await Promise.all([
    prisma.role.create({ data: { organizationId, name: `role-${hex}` } }),
    prisma.permission.create({ data: { organizationId, name: `perm:${hex}` } }),
    prisma.identityProvider.create({ data: { organizationId, name: `SSO ${hex}`, issuer: "https://sso.example.com", clientId: "porta" } }),
    prisma.organizationDomain.create({ data: { organizationId, domain: `d${hex}.example.com`, verificationToken: randomBytes(24).toString("base64url") } }),
    prisma.scimToken.create({ data: { organizationId, name: `SCIM ${hex}`, tokenHash: randomBytes(32).toString("hex"), prefix: "porta_scim_abcd", expiresAt: new Date(Date.now() + 86_400_000) } }),
    prisma.invitation.create({ data: { organizationId, email: `invited-${hex}@example.com`, tokenHash: randomBytes(32).toString("hex"), expiresAt: new Date(Date.now() + 86_400_000) } }),
    prisma.auditEntry.create({ data: { organizationId, eventType: "test.fixture", actorType: "system" } }),
    prisma.setupLink.create({ data: { organizationId, tokenHash: randomBytes(32).toString("hex"), expiresAt: new Date(Date.now() + 86_400_000) } }),
  ]);
  return {
    organization: organizationId,
    user: user.id,
    role: role.id,
    permission: permission.id,
    identityProvider: identityProvider.id,
    organizationDomain: organizationDomain.id,
    scimToken: scimToken.id,
    invitation: invitation.id,
    auditEntry: auditEntry.id,
    setupLink: setupLink.id,
    // Kinds no operation of the door names yet: any id will do.
    application: randomUUID(),
    client: randomUUID(),
    apiResource: randomUUID(),
  };
}

/** A 1×1 PNG: the smallest upload the branding assets accept. */
const PNG = Buffer.from("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==", "base64");

/**
 * A body each scoped operation with a body accepts, so that what answers is the scope check and
 * not the body's validation. A scoped operation with a body and no entry here fails the test.
 */
const BODIES: Record<string, (f: Fixtures) => unknown> = {
  "auditSinks.create": () => ({ name: unique("SIEM"), kind: "jsonl", url: "https://siem.example.com/ingest" }),
  "auditSinks.update": () => ({ name: unique("SIEM") }),
  "branding.updateSettings": () => ({ primaryColor: "#123456" }),
  "domains.add": () => ({ domain: `${unique("new")}.example.com` }),
  "identityProviders.create": (f) => ({ organizationId: f.organization, name: unique("SSO"), issuer: "https://sso.example.com", clientId: "porta" }),
  "identityProviders.update": () => ({ name: unique("Renamed") }),
  "scimTokens.create": () => ({ name: unique("SCIM") }),
  "setupLinks.create": () => ({ note: unique("IT") }),
  "twoFactor.reset": () => ({}),
  "twoFactor.regenerateRecoveryCodes": () => ({}),
  "userImports.preview": () => ({ format: "auth0", data: JSON.stringify({ email: `${unique("imported")}@example.com` }) }),
  "userImports.apply": () => ({ format: "auth0", data: JSON.stringify({ email: `${unique("imported")}@example.com` }) }),
  "users.create": () => ({ email: `${unique("new")}@example.com` }),
  "users.expireImportedPasswords": () => ({ createdBefore: "2021-01-01T00:00:00Z" }),
  "users.invite": () => ({ email: `${unique("invited")}@example.com` }),
  "users.invitePreview": () => ({ email: `${unique("preview")}@example.com` }),
  "users.update": () => ({ givenName: "Grace" }),
  "usersById.update": () => ({ givenName: "Grace" }),
  "users.setPassword": () => ({ password: "another long password 7" }),
  "users.reportCompromisedPassword": () => ({ reason: "Seen in a breach corpus" }),
};

/** Path parameters no scope names that are not ids. */
const OTHER_PARAMS: Record<string, string> = { blockId: "lockout" };

/** The request that names `f`'s organization everywhere the operation's scopes look. */
function requestFor(op: Operation, f: Fixtures): { method: string; path: string; body?: unknown; raw?: { contentType: string; bytes: Uint8Array<ArrayBuffer> } } {
  const scopes = op.organizationScope ?? [];
  const path = op.path.replace(/\{(\w+)\}/g, (_all, param: string) => {
    const scope = scopes.find((s) => (s.in === "path" || s.in === "entity") && s.param === param);
    if (!scope) return OTHER_PARAMS[param] ?? randomUUID();
    return scope.in === "entity" ? f[scope.owner] : f.organization;
  });
  const query = new URLSearchParams();
  for (const scope of scopes) if (scope.in === "query") query.set(scope.field, f.organization);
  if (op.operationId === "branding.uploadAsset") query.set("kind", "logo");
  const url = query.size > 0 ? `${path}?${query}` : path;
  if (op.rawBody) return { method: op.method, path: url, raw: { contentType: "image/png", bytes: new Uint8Array(PNG) } };
  if (!op.body) return { method: op.method, path: url };
  const body = BODIES[op.operationId];
  if (!body) throw new Error(`${op.operationId} has a body but no sample body in BODIES`);
  const value = body(f);
  for (const scope of scopes) if (scope.in === "body") (value as Record<string, unknown>)[scope.field] = f.organization;
  return { method: op.method, path: url, body: value };
}

const scoped = () => adminOperations().filter((op) => op.organizationScope);
const unscoped = () => adminOperations().filter((op) => !op.organizationScope && op.permission !== "public");
const writes = (op: Operation) => op.method !== "GET";
const label = (op: Operation) => `${op.operationId} (${op.method} ${op.path})`;

function describeResponse(res: ApiResponse): string {
  return `${res.status} ${JSON.stringify(res.body)}`;
}

describe("the operation table through an organization's door", () => {
  it("holds the organization roles' permissions to the operations that declare a scope", () => {
    for (const op of unscoped()) expect(op.organizationScope, label(op)).toBeUndefined();
    for (const op of scoped()) expect(ORGANIZATION_ADMIN_PERMISSIONS.has(op.permission as never), `${label(op)} needs ${op.permission}`).toBe(true);
    for (const name of ["admin:key:write", "admin:org:delete", "admin:org:update", "admin:user:impersonate", "admin:webhook:write", "admin:import:write", "admin:config:write", "admin:client:write"]) {
      expect(ORGANIZATION_ADMIN_PERMISSIONS.has(name as never), name).toBe(false);
    }
    for (const name of ORGANIZATION_AUDITOR_PERMISSIONS) expect(name).toMatch(/:read$/);
  });

  it("refuses every operation without an organization scope, and writes nothing", async () => {
    const door = organizationApi(porta, tenantA.org.slug, adminTokenA);
    const before = await dataFingerprint(porta);
    for (const op of unscoped()) {
      const path = op.path.replace(/\{(\w+)\}/g, () => tenantA.org.id);
      const res = await door.call(op.method, path, writes(op) ? {} : undefined);
      expect(res.status, `${label(op)} → ${describeResponse(res)}`).toBe(403);
    }
    expect(await dataFingerprint(porta)).toEqual(before);
  }, 120_000);

  it("answers every scoped operation given another organization's ids with 404, and writes nothing", async () => {
    const door = organizationApi(porta, tenantA.org.slug, adminTokenA);
    const elsewhere = await fixturesOf(tenantB);
    for (const op of scoped()) {
      const before = await dataFingerprint(porta);
      const request = requestFor(op, elsewhere);
      const res = await door.call(request.method, request.path, request.body, request.raw);
      expect(res.status, `${label(op)} → ${describeResponse(res)}`).toBe(404);
      expect((res.body as ErrorBody).error.message, label(op)).toBe(TARGET_ELSEWHERE);
      expect(await dataFingerprint(porta), label(op)).toEqual(before);
    }
  }, 180_000);

  it("runs every scoped operation given the organization's own ids", async () => {
    const door = organizationApi(porta, tenantA.org.slug, adminTokenA);
    for (const op of scoped()) {
      // Fresh targets for each: a delete must not take away what the next operation needs.
      const request = requestFor(op, await fixturesOf(tenantA));
      const res = await door.call(request.method, request.path, request.body, request.raw);
      expect([401, 403], `${label(op)} → ${describeResponse(res)}`).not.toContain(res.status);
      // What is refused past the scope check is about the operation's own sub-targets (a random
      // passkey or block id), never "another organization's target".
      if (res.status === 404) expect((res.body as ErrorBody).error.message, label(op)).not.toBe(TARGET_ELSEWHERE);
      expect(res.status, `${label(op)} → ${describeResponse(res)}`).toBeLessThan(500);
    }
  }, 240_000);

  it("lets an auditor read but not write", async () => {
    const door = organizationApi(porta, tenantA.org.slug, auditorTokenA);
    const before = await dataFingerprint(porta);
    for (const op of scoped().filter(writes)) {
      const request = requestFor(op, await fixturesOf(tenantA));
      const res = await door.call(request.method, request.path, request.body, request.raw);
      expect(res.status, `${label(op)} → ${describeResponse(res)}`).toBe(403);
    }
    // The fixtures are the only rows written.
    const after = await dataFingerprint(porta);
    expect(after.userRoles).toBe(before.userRoles);
    const users = await door.get<{ data: Array<{ id: string }> }>(`/organizations/${tenantA.org.id}/users`);
    expect(users.status).toBe(200);
    expect(users.body.data.map((u) => u.id)).toContain(auditorA.id);
  }, 180_000);
});

describe("who gets through an organization's door", () => {
  it("answers 401 to a token of another organization, to a service admin's token and to no token", async () => {
    for (const token of [adminTokenB, serviceAdminToken, undefined, "not-a-token"]) {
      const res = await organizationApi(porta, tenantA.org.slug, token).get(`/organizations/${tenantA.org.id}/users`);
      expect(res.status).toBe(401);
    }
  });

  it("answers 401 on the Admin API to an organization administrator's token", async () => {
    expect((await adminApi(porta, adminTokenA).get(`/organizations/${tenantA.org.id}/users`)).status).toBe(401);
    expect((await adminApi(porta, adminTokenA).get("/organizations")).status).toBe(401);
  });

  it("answers 401 to an administrator who signed in with a password only, and to a user without an organization role", async () => {
    // The token says how its holder signed in: what the door requires.
    expect(decodeJwt(adminTokenA)).toMatchObject({ aud: `${tenantA.issuer}/api/admin`, amr: ["pwd", "otp", "mfa"] });
    const passwordOnly = await userWithRole(tenantA, "org-admin", "none");
    const passwordOnlyToken = await administrationToken(porta, tenantA, passwordOnly);
    expect(decodeJwt(passwordOnlyToken).amr).toEqual(["pwd"]);
    expect((await organizationApi(porta, tenantA.org.slug, passwordOnlyToken).get(`/organizations/${tenantA.org.id}/users`)).status).toBe(401);
    const withoutRole = await userWithRole(tenantA, null);
    const withoutRoleToken = await administrationToken(porta, tenantA, withoutRole);
    expect((await organizationApi(porta, tenantA.org.slug, withoutRoleToken).get(`/organizations/${tenantA.org.id}/users`)).status).toBe(401);
  }, 60_000);

  it("stops letting an administrator in once the role is taken away or the user is deactivated", async () => {
    const admin = await userWithRole(tenantA, "org-admin");
    const token = await administrationToken(porta, tenantA, admin);
    const door = organizationApi(porta, tenantA.org.slug, token);
    expect((await door.get(`/organizations/${tenantA.org.id}`)).status).toBe(200);
    expect((await api.delete(`/users/${admin.id}/roles/${await roleId(tenantA.org.id, "org-admin")}`)).status).toBe(204);
    expect((await door.get(`/organizations/${tenantA.org.id}`)).status).toBe(401);
  }, 60_000);

  it("has no door for the super-admin organization", async () => {
    const res = await organizationApi(porta, porta.services.config.superAdminSlug, serviceAdminToken).get("/organizations");
    expect(res.status).toBe(401);
  });
});

describe("what an organization administrator does", () => {
  it("is recorded as the organization's administrator, and the audit log lists only the organization's events", async () => {
    const door = organizationApi(porta, tenantA.org.slug, adminTokenA);
    const user = await createUser(porta.services.db.prisma, tenantA.org.id);
    const deactivated = await door.post(`/users/${user.id}/deactivate`);
    expect(deactivated.status, describeResponse(deactivated)).toBe(200);
    const entry = await porta.services.db.prisma.auditEntry.findFirstOrThrow({ where: { targetId: user.id, eventType: { startsWith: "user." } }, orderBy: { id: "desc" } });
    expect(entry).toMatchObject({ actorType: "org_admin", actorId: adminA.id, organizationId: tenantA.org.id });

    // Organization B has events of its own.
    await organizationApi(porta, tenantB.org.slug, adminTokenB).post(`/users/${(await createUser(porta.services.db.prisma, tenantB.org.id)).id}/deactivate`);
    const listed = await door.get<{ data: Array<{ organizationId: string | null; id: string }> }>("/audit?pageSize=100");
    expect(listed.status).toBe(200);
    expect(listed.body.data.length).toBeGreaterThan(0);
    expect(listed.body.data.map((e) => e.id)).toContain(entry.id);
    for (const e of listed.body.data) expect(e.organizationId).toBe(tenantA.org.id);
  });

  it("cannot learn whether another organization, its people or their email addresses exist through the name filters", async () => {
    const door = organizationApi(porta, tenantA.org.slug, adminTokenA);
    const outsider = await createUser(porta.services.db.prisma, tenantB.org.id);
    const probes = [
      `/audit?organization=${encodeURIComponent(tenantB.org.slug)}`,
      `/audit?actor=${encodeURIComponent(outsider.email)}`,
      `/audit?target=${encodeURIComponent(outsider.email)}`,
      `/sessions?organization=${encodeURIComponent(tenantB.org.slug)}`,
      `/sessions?user=${encodeURIComponent(outsider.email)}`,
    ];
    for (const probe of probes) {
      const known = await door.get(probe);
      const unknown = await door.get(probe.replace(/=.*$/, "=nobody-anywhere-at-all%40example.com"));
      // The same answer whether the name exists elsewhere or nowhere.
      expect([known.status, unknown.status], probe).toEqual([422, 422]);
      expect(known.body, probe).toEqual(unknown.body);
    }
  });

  it("grants and removes the organization's roles, including org-admin, but no role of another organization", async () => {
    const door = organizationApi(porta, tenantA.org.slug, adminTokenA);
    const user = await createUser(porta.services.db.prisma, tenantA.org.id);
    const granted = await door.put(`/users/${user.id}/roles/${await roleId(tenantA.org.id, "org-admin")}`);
    expect(granted.status, describeResponse(granted)).toBe(200);
    expect((await door.delete(`/users/${user.id}/roles/${await roleId(tenantA.org.id, "org-admin")}`)).status).toBe(204);
    expect((await door.put(`/users/${user.id}/roles/${await roleId(tenantB.org.id, "org-admin")}`)).status).toBe(404);
  });

  it("invites with the organization's roles, org-admin included, but not with another organization's", async () => {
    const door = organizationApi(porta, tenantA.org.slug, adminTokenA);
    const invited = await door.post<{ email: string }>(`/organizations/${tenantA.org.id}/users/invite`, { email: `${unique("colleague")}@example.com`, roles: ["org-admin"] });
    expect(invited.status, describeResponse(invited)).toBe(201);
    const row = await porta.services.db.prisma.invitation.findFirstOrThrow({ where: { organizationId: tenantA.org.id, email: invited.body.email } });
    expect(row.roles).toEqual(["org-admin"]);
    const elsewhere = await door.post(`/organizations/${tenantB.org.id}/users/invite`, { email: `${unique("colleague")}@example.com`, roles: ["org-admin"] });
    expect(elsewhere.status).toBe(404);
  });

  it("works with the generated SDK at the organization's base URL", async () => {
    const sdk = new PortaAdmin({ baseUrl: `${porta.url}/${tenantA.org.slug}`, auth: staticToken(adminTokenA) });
    const page = await sdk.users.list(tenantA.org.id);
    expect(page.data.map((u) => u.id)).toContain(adminA.id);
  });
});

describe("the organization roles", () => {
  it("exist in every new organization and cannot be renamed", async () => {
    for (const name of ["org-admin", "org-auditor"]) {
      const id = await roleId(tenantA.org.id, name);
      const renamed = await api.put(`/roles/${id}`, { name: `${name}-renamed` });
      expect(renamed.status, describeResponse(renamed)).toBe(409);
      expect((renamed.body as ErrorBody).error.code).toBe("protected_role");
    }
  });
});
