import * as oidc from "openid-client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { adminApi, obtainAdminTokens } from "../support/admin-api";
import { createUser } from "../support/factories";
import { startTestPorta, TEST_ADMIN, type TestPorta } from "../support/porta";
import {
  BAD_CURSOR,
  createTenant,
  dataFingerprint,
  expect422,
  expectError,
  FORGED_CURSOR,
  OVERSIZE,
  PASSWORD,
  signIn,
  tenantOf,
  unique,
  userinfoStatus,
  type BadRequest,
  type Tenant,
} from "./helpers";
import type { Page } from "~/.server/admin/http/pagination";

/**
 * Sessions in the Admin API (a session is a user's grant to a client, with the refresh and
 * access tokens issued under it): listing per organization and per user, revoking one, and
 * revoking all of a user's. Users sign in through the real pages; revocation is proved at the
 * token and userinfo endpoints with openid-client.
 */
interface Session {
  id: string;
  organizationId: string;
  userId: string | null;
  clientId: string | null;
  createdAt: string;
  expiresAt: string | null;
  userEmail: string | null;
  clientName: string | null;
  ip: string | null;
  userAgent: string | null;
  lastSeenAt: string | null;
}
type SignedIn = Awaited<ReturnType<typeof signIn>>;

let porta: TestPorta;
let api: ReturnType<typeof adminApi>;
let adminId: string;
let tenant: Tenant;
let other: Tenant;

beforeAll(async () => {
  porta = await startTestPorta();
  api = adminApi(porta, (await obtainAdminTokens(porta)).accessToken);
  adminId = (await porta.services.db.prisma.user.findFirstOrThrow({ where: { email: TEST_ADMIN.email } })).id;
  tenant = await createTenant(porta);
  other = await createTenant(porta);
});
afterAll(async () => {
  await porta?.stop();
});

/** A sign-in through the real pages that asks for offline access with consent, so a refresh token is issued. */
async function withRefreshToken(t: Tenant, email: string) {
  const session = await signIn(t, { email, password: PASSWORD }, "openid email offline_access", { prompt: "consent" });
  if (!session.refreshToken) throw new Error("no refresh token was issued");
  return session;
}

async function signedInUser(t: Tenant) {
  const user = await createUser(porta.services.db.prisma, t.org.id, { email: `${unique("s")}@example.com`, password: PASSWORD });
  return { user, session: await withRefreshToken(t, user.email) };
}

/** Uses the refresh token at the token endpoint: null when it worked, else the OAuth error code. */
async function refreshError(session: SignedIn): Promise<string | null> {
  try {
    const tokens = await oidc.refreshTokenGrant(session.config, session.refreshToken!);
    // Rotation: keep the newest refresh token for the next attempt.
    if (tokens.refresh_token) session.refreshToken = tokens.refresh_token;
    return null;
  } catch (error) {
    if (error instanceof oidc.ResponseBodyError) return error.error;
    throw error;
  }
}

const sessionsOf = (query: string) => api.get<Page<Session>>(`/sessions?${query}`);

describe("listing", () => {
  it("lists a user's sessions per organization and per user, with cursor paging", async () => {
    const ada = await signedInUser(tenant);
    const bob = await signedInUser(tenant);
    const eve = await signedInUser(other);

    const forUser = await sessionsOf(`userId=${ada.user.id}`);
    expect(forUser.status).toBe(200);
    expect(forUser.body.total).toBe(1);
    const [session] = forUser.body.data;
    expect(session).toEqual({
      id: expect.any(String),
      organizationId: tenant.org.id,
      userId: ada.user.id,
      clientId: tenant.clientId,
      createdAt: expect.any(String),
      expiresAt: expect.any(String),
      // By name, and where the browser session holding the grant was last seen (decision 039).
      userEmail: ada.user.email,
      clientName: (await porta.services.db.prisma.client.findUniqueOrThrow({ where: { id: tenant.clientId } })).name,
      ip: "127.0.0.1",
      userAgent: "node",
      lastSeenAt: expect.any(String),
    });
    expect(Math.abs(Date.parse(session!.createdAt) - Date.now())).toBeLessThan(60_000);
    expect(Math.abs(Date.parse(session!.lastSeenAt!) - Date.now())).toBeLessThan(60_000);
    expect(Date.parse(session!.expiresAt!)).toBeGreaterThan(Date.now());

    // By name (decision 039): the user by email in any case, the organization by slug or name.
    const byEmail = await sessionsOf(`user=${encodeURIComponent(ada.user.email.toUpperCase())}`);
    expect(byEmail.body.data.map((s) => s.userId)).toEqual([ada.user.id]);
    expect((await sessionsOf(`organization=${tenant.org.slug}`)).body.total).toBe(2);
    expect((await sessionsOf(`organization=${encodeURIComponent(`Organization ${tenant.org.slug}`)}&user=${encodeURIComponent(bob.user.email)}`)).body.data.map((s) => s.userId)).toEqual([bob.user.id]);

    const inOrg = await sessionsOf(`organizationId=${tenant.org.id}`);
    expect(inOrg.body.total).toBe(2);
    expect(inOrg.body.data.map((s) => s.userId).sort()).toEqual([ada.user.id, bob.user.id].sort());
    // Newest first.
    expect(inOrg.body.data[0]!.userId).toBe(bob.user.id);
    expect((await sessionsOf(`organizationId=${other.org.id}`)).body.data.map((s) => s.userId)).toEqual([eve.user.id]);
    // Both filters together: a user of another organization has none here.
    expect((await sessionsOf(`organizationId=${tenant.org.id}&userId=${eve.user.id}`)).body).toEqual({ data: [], total: 0, page: 1, pageSize: 20 });

    const first = await sessionsOf(`organizationId=${tenant.org.id}&limit=1`);
    expect(first.body.data).toHaveLength(1);
    expect(first.body.total).toBe(2);
    expect(first.body.cursor).toEqual(expect.any(String));
    const second = await sessionsOf(`organizationId=${tenant.org.id}&limit=1&cursor=${first.body.cursor}`);
    expect(second.body.data).toHaveLength(1);
    expect(second.body.cursor).toBeUndefined();
    expect([...first.body.data, ...second.body.data]).toEqual(inOrg.body.data);

    const offset = await sessionsOf(`organizationId=${tenant.org.id}&page=2&pageSize=1`);
    expect(offset.body).toEqual({ data: [inOrg.body.data[1]], total: 2, page: 2, pageSize: 1 });
  });
});

describe("revoking", () => {
  it("revokes one session: its refresh token fails at once, its access token fails at userinfo, other sessions live on", async () => {
    const prisma = porta.services.db.prisma;
    const ada = await signedInUser(tenant);
    const bob = await signedInUser(tenant);
    expect(await refreshError(ada.session)).toBeNull();
    const [grant] = (await sessionsOf(`userId=${ada.user.id}`)).body.data;

    const res = await api.delete(`/sessions/${grant!.id}`);
    expect(res.status).toBe(204);
    expect(res.body).toBeUndefined();
    expect(await refreshError(ada.session)).toBe("invalid_grant");
    expect(await userinfoStatus(tenant, ada.session.accessToken)).toBe(401);
    expect((await sessionsOf(`userId=${ada.user.id}`)).body.total).toBe(0);

    expect(await userinfoStatus(tenant, bob.session.accessToken)).toBe(200);
    expect(await refreshError(bob.session)).toBeNull();

    const audit = await prisma.auditEntry.findFirstOrThrow({ where: { eventType: "session.revoked", targetId: ada.user.id } });
    expect(audit).toMatchObject({ actorType: "admin", actorId: adminId, organizationId: tenant.org.id, targetType: "user", data: { clientId: tenant.clientId } });

    expectError(await api.delete(`/sessions/${grant!.id}`), 404, "not_found");
  });

  it("revoking a user's sessions makes their refresh tokens fail at the token endpoint at once", async () => {
    const prisma = porta.services.db.prisma;
    const ada = await signedInUser(tenant);
    // A second client of the same organization: a second grant (every sign-in has one of its own).
    const secondClient = await tenantOf(porta, tenant.org);
    const second = await withRefreshToken(secondClient, ada.user.email);
    const eve = await signedInUser(other);
    expect(await refreshError(ada.session)).toBeNull();
    expect(await refreshError(second)).toBeNull();
    expect((await sessionsOf(`userId=${ada.user.id}`)).body.data.map((s) => s.clientId).sort()).toEqual([tenant.clientId, secondClient.clientId].sort());

    const res = await api.delete(`/users/${ada.user.id}/sessions`);
    expect(res.status).toBe(204);
    expect(await refreshError(ada.session)).toBe("invalid_grant");
    expect(await refreshError(second)).toBe("invalid_grant");
    expect(await userinfoStatus(tenant, ada.session.accessToken)).toBe(401);
    expect(await userinfoStatus(secondClient, second.accessToken)).toBe(401);
    expect((await sessionsOf(`userId=${ada.user.id}`)).body.total).toBe(0);
    expect(await prisma.oidcPayload.count({ where: { accountId: ada.user.id } })).toBe(0);

    // Someone else's sessions are untouched.
    expect(await userinfoStatus(other, eve.session.accessToken)).toBe(200);
    expect(await refreshError(eve.session)).toBeNull();

    const audit = await prisma.auditEntry.findFirstOrThrow({ where: { eventType: "user.sessions_revoked", targetId: ada.user.id } });
    expect(audit).toMatchObject({ actorType: "admin", actorId: adminId, organizationId: tenant.org.id, targetType: "user" });

    // The user signs in again normally: a fresh session.
    const again = await signIn(tenant, { email: ada.user.email, password: PASSWORD });
    expect(await userinfoStatus(tenant, again.accessToken)).toBe(200);
    expectError(await api.delete("/users/0190a000-0000-7000-8000-000000000000/sessions"), 404, "not_found");
  });
});

describe("bad input and permissions", () => {
  it("answers 422 with field details for bad input and writes nothing", async () => {
    const ada = await signedInUser(tenant);
    const cases: BadRequest[] = [
      { label: "list: organizationId not a UUID", method: "GET", path: "/sessions?organizationId=nope", field: "query.organizationId" },
      { label: "list: userId not a UUID", method: "GET", path: `/sessions?userId=${OVERSIZE}`, field: "query.userId" },
      { label: "list: pageSize a word", method: "GET", path: "/sessions?pageSize=ten", field: "query.pageSize" },
      { label: "list: limit too large", method: "GET", path: "/sessions?limit=1000", field: "query.limit" },
      { label: "list: unknown parameter", method: "GET", path: "/sessions?clientId=x", field: "query.clientId" },
      { label: "list: an organization nobody is named", method: "GET", path: "/sessions?organization=no-such-organization-here", field: "query.organization" },
      { label: "list: a user nobody is", method: "GET", path: `/sessions?user=${encodeURIComponent("nobody@nowhere.example")}`, field: "query.user" },
      { label: "list: an empty user", method: "GET", path: "/sessions?user=%20", field: "query.user" },
      { label: "list: invalid cursor", method: "GET", path: `/sessions?cursor=${BAD_CURSOR}`, field: "cursor" },
      { label: "list: forged cursor", method: "GET", path: `/sessions?cursor=${FORGED_CURSOR}`, field: "cursor" },
      { label: "list: oversize cursor", method: "GET", path: `/sessions?cursor=${OVERSIZE}`, field: "query.cursor" },
      { label: "list: cursor with page", method: "GET", path: "/sessions?limit=2&page=1", field: "cursor" },
      { label: "revoke: id too short", method: "DELETE", path: "/sessions/abc", field: "path.id" },
      { label: "revoke: oversize id", method: "DELETE", path: `/sessions/${OVERSIZE}`, field: "path.id" },
      { label: "revoke for user: id not a UUID", method: "DELETE", path: "/users/nope/sessions", field: "path.id" },
    ];
    const before = await dataFingerprint(porta);
    for (const c of cases) expect422(await api.call(c.method, c.path, c.body), c.field, c.label);
    expect(await dataFingerprint(porta)).toEqual(before);
    expect(await userinfoStatus(tenant, ada.session.accessToken)).toBe(200);
  });

  it("needs admin:session:read to list and admin:session:write to revoke", async () => {
    const prisma = porta.services.db.prisma;
    const ada = await signedInUser(tenant);
    const [grant] = (await sessionsOf(`userId=${ada.user.id}`)).body.data;
    const withoutPermission = async (permission: string, check: () => Promise<void>) => {
      const link = await prisma.rolePermission.findFirstOrThrow({ where: { role: { name: "service-admin" }, permission: { name: permission } } });
      await prisma.rolePermission.delete({ where: { roleId_permissionId: { roleId: link.roleId, permissionId: link.permissionId } } });
      try {
        await check();
      } finally {
        await prisma.rolePermission.create({ data: link });
      }
    };
    await withoutPermission("admin:session:read", async () => {
      expectError(await api.get("/sessions"), 403, "forbidden");
    });
    await withoutPermission("admin:session:write", async () => {
      const before = await dataFingerprint(porta);
      expectError(await api.delete(`/sessions/${grant!.id}`), 403, "forbidden");
      expectError(await api.delete(`/users/${ada.user.id}/sessions`), 403, "forbidden");
      expect(await dataFingerprint(porta)).toEqual(before);
    });
    expect(await userinfoStatus(tenant, ada.session.accessToken)).toBe(200);
    expect(await refreshError(ada.session)).toBeNull();
    expectError(await adminApi(porta, undefined).get("/sessions"), 401, "unauthorized");
  });
});
