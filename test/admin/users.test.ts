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
  unique,
  userinfoStatus,
  type BadRequest,
  type ErrorBody,
  type Tenant,
} from "./helpers";
import type { Page } from "~/.server/admin/http/pagination";

/**
 * The user operations of the Admin API, organization-scoped and by id, against a real server
 * with a real admin token: every operation, the password policy, sessions ending, ETags, and
 * 422 for bad input that writes nothing.
 */
interface User {
  id: string;
  organizationId: string;
  email: string;
  givenName: string | null;
  familyName: string | null;
  emailVerified: boolean;
  status: string;
  locale: string | null;
  hasPassword: boolean;
  lockedUntil: string | null;
  lastLoginAt: string | null;
  createdAt: string;
  updatedAt: string;
}
interface History {
  data: Array<{ id: string; eventType: string; actorType: string; actorId: string | null; data: unknown }>;
  hasMore: boolean;
  nextCursor: string | null;
}

const USER_KEYS = ["createdAt", "email", "emailVerified", "familyName", "givenName", "hasPassword", "id", "lastLoginAt", "locale", "lockedUntil", "organizationId", "passwordScheme", "status", "updatedAt"];

let porta: TestPorta;
let api: ReturnType<typeof adminApi>;
let adminId: string;
let tenant: Tenant;
let other: Tenant;

beforeAll(async () => {
  porta = await startTestPorta();
  const { accessToken } = await obtainAdminTokens(porta);
  api = adminApi(porta, accessToken);
  adminId = (await porta.services.db.prisma.user.findFirstOrThrow({ where: { email: TEST_ADMIN.email } })).id;
  tenant = await createTenant(porta);
  other = await createTenant(porta);
});
afterAll(async () => {
  await porta?.stop();
});

const usersOf = (t: Tenant) => `/organizations/${t.org.id}/users`;
const create = (t: Tenant, body: Record<string, unknown>) => api.post<User>(usersOf(t), body);

describe("organization-scoped users", () => {
  it("creates a user with a policy-checked password, answers 201 with an ETag and never shows the hash", async () => {
    const email = `${unique("ada")}@Example.com`;
    const res = await create(tenant, { email: `  ${email} `, givenName: "Ada", familyName: "Lovelace", password: PASSWORD, emailVerified: true, locale: "de" });
    expect(res.status).toBe(201);
    expect(res.headers.get("etag")).toBe('"v1"');
    expect(Object.keys(res.body).sort()).toEqual(USER_KEYS);
    expect(res.body).toMatchObject({ organizationId: tenant.org.id, email: email.toLowerCase(), givenName: "Ada", familyName: "Lovelace", emailVerified: true, status: "active", locale: "de", hasPassword: true, lockedUntil: null, lastLoginAt: null });
    const row = await porta.services.db.prisma.user.findUniqueOrThrow({ where: { id: res.body.id } });
    expect(row.passwordHash).toMatch(/^\$argon2id\$/);
    // No PHC string (the read names the scheme, `passwordScheme: "argon2id"`, never a hash).
    expect(JSON.stringify(res.body)).not.toContain("$argon2");
    // The new account signs in with that password at its organization.
    const { accessToken } = await signIn(tenant, { email, password: PASSWORD });
    expect(await userinfoStatus(tenant, accessToken)).toBe(200);
    // The audit record names the change but never the password.
    const audit = await porta.services.db.prisma.auditEntry.findFirstOrThrow({ where: { eventType: "user.created", targetId: res.body.id } });
    expect(audit).toMatchObject({ actorType: "admin", actorId: adminId, organizationId: tenant.org.id, targetType: "user" });
    expect(JSON.stringify(audit.data)).not.toContain(PASSWORD);
    expect((audit.data as { change: Record<string, unknown> }).change).toMatchObject({ email: email.toLowerCase(), hasPassword: true });
  });

  it("creates a user without a password, unverified by default", async () => {
    const res = await create(tenant, { email: `${unique("nopw")}@example.com` });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ hasPassword: false, emailVerified: false, givenName: null, familyName: null, locale: null });
  });

  it("refuses passwords against the NIST rules with 422 naming the reason, and writes nothing", async () => {
    const before = await dataFingerprint(porta);
    const email = `${unique("weak")}@example.com`;
    const cases: Array<[string, RegExp]> = [
      ["short", /too short.*8/],
      ["password1", /breached/],
      ["x".repeat(1025), /too long.*1024/],
      [email, /email/],
    ];
    for (const [password, reason] of cases) {
      const res = await create(tenant, { email, password });
      expect422(res, "password", password.slice(0, 20));
      const detail = (res.body as unknown as ErrorBody).error.details!.find((d) => d.field === "password")!;
      expect(detail.message).toMatch(reason);
    }
    expect(await dataFingerprint(porta)).toEqual(before);
  });

  it("answers 409 for a duplicate email (case-insensitive) and 404 for an unknown or deleted organization", async () => {
    const email = `${unique("dup")}@example.com`;
    expect((await create(tenant, { email })).status).toBe(201);
    const dup = await create(tenant, { email: email.toUpperCase() });
    expectError(dup, 409, "duplicate");
    // The same address in another organization is another account.
    expect((await create(other, { email })).status).toBe(201);
    expectError(await api.post(`/organizations/00000000-0000-4000-8000-000000000000/users`, { email: "x@example.com" }), 404, "not_found");
    const gone = await createTenant(porta);
    await porta.services.db.prisma.organization.update({ where: { id: gone.org.id }, data: { status: "deleted" } });
    expectError(await create(gone, { email: "x@example.com" }), 404);
    expectError(await api.get(usersOf(gone)), 404);
    // organizationId in the body must agree with the path.
    expect422(await create(tenant, { email: "y@example.com", organizationId: other.org.id }), "organizationId");
  });

  it("lists with offset and cursor paging, search on email and name, status filter and sorting", async () => {
    const t = await createTenant(porta);
    const mark = unique("zq");
    const created: User[] = [];
    for (const [given, family, status] of [
      ["Grace", "Hopper", "active"],
      ["Alan", "Turing", "inactive"],
      ["Barbara", mark, "active"],
      ["Edsger", "Dijkstra", "active"],
      ["Margaret", "Hamilton", "inactive"],
    ] as const) {
      const res = await create(t, { email: `${given.toLowerCase()}@${mark}.example.com`, givenName: given, familyName: family });
      created.push(res.body);
      if (status === "inactive") expect((await api.post(`${usersOf(t)}/${res.body.id}/deactivate`)).status).toBe(200);
    }
    const first = await api.get<Page<User>>(`${usersOf(t)}?page=1&pageSize=2`);
    expect(first.status).toBe(200);
    expect(first.body).toMatchObject({ total: 5, page: 1, pageSize: 2 });
    expect(first.body.data.map((u) => u.id)).toEqual(created.slice(0, 2).map((u) => u.id));
    const third = await api.get<Page<User>>(`${usersOf(t)}?page=3&pageSize=2`);
    expect(third.body.data.map((u) => u.id)).toEqual([created[4]!.id]);

    const seen: string[] = [];
    let cursor: string | undefined;
    do {
      const res = await api.get<Page<User>>(`${usersOf(t)}?limit=2${cursor ? `&cursor=${cursor}` : ""}`);
      expect(res.status).toBe(200);
      expect(res.body.total).toBe(5);
      seen.push(...res.body.data.map((u) => u.id));
      cursor = res.body.cursor;
    } while (cursor);
    expect(seen).toEqual(created.map((u) => u.id));

    const byName = await api.get<Page<User>>(`${usersOf(t)}?q=${mark.toUpperCase()}`);
    // The mark is in every email, and in one family name.
    expect(byName.body.total).toBe(5);
    const byGiven = await api.get<Page<User>>(`${usersOf(t)}?q=grac`);
    expect(byGiven.body.data.map((u) => u.givenName)).toEqual(["Grace"]);
    const byEmail = await api.get<Page<User>>(`${usersOf(t)}?q=${encodeURIComponent(`edsger@${mark}`)}`);
    expect(byEmail.body.data.map((u) => u.givenName)).toEqual(["Edsger"]);
    const inactive = await api.get<Page<User>>(`${usersOf(t)}?status=inactive`);
    expect(inactive.body.data.map((u) => u.givenName).sort()).toEqual(["Alan", "Margaret"]);
    const sorted = await api.get<Page<User>>(`${usersOf(t)}?sort=email&order=desc`);
    expect(sorted.body.data.map((u) => u.givenName)).toEqual(["Margaret", "Grace", "Edsger", "Barbara", "Alan"]);
    // Only this organization's users.
    expect((await api.get<Page<User>>(`${usersOf(other)}?q=${mark}`)).body.total).toBe(0);
  });

  it("gets a user with an ETag; a user of another organization is 404 under this one", async () => {
    const user = (await create(tenant, { email: `${unique("get")}@example.com` })).body;
    const res = await api.get<User>(`${usersOf(tenant)}/${user.id}`);
    expect(res.status).toBe(200);
    expect(res.headers.get("etag")).toBe('"v1"');
    expect(res.body).toEqual({ ...user, blocks: [] });
    expectError(await api.get(`${usersOf(other)}/${user.id}`), 404, "not_found");
    expectError(await api.get(`${usersOf(tenant)}/00000000-0000-4000-8000-000000000000`), 404);
  });

  it("invites without creating a user, returning exactly the invitation outcome; an existing user is 409", async () => {
    const prisma = porta.services.db.prisma;
    await prisma.role.create({ data: { organizationId: tenant.org.id, name: "editor" } });
    const email = `${unique("invitee")}@example.com`;
    const res = await api.post<Record<string, unknown>>(`${usersOf(tenant)}/invite`, { email, givenName: "Ivy", roles: ["editor"], locale: "de" });
    expect(res.status).toBe(201);
    expect(Object.keys(res.body).sort()).toEqual(["email", "expiresAt", "invitationId", "invitationSent"]);
    expect(res.body).toMatchObject({ email, invitationSent: true });
    expect(Date.parse(res.body.expiresAt as string)).toBeGreaterThan(Date.now());
    const invitation = await prisma.invitation.findUniqueOrThrow({ where: { id: res.body.invitationId as string } });
    expect(invitation).toMatchObject({ organizationId: tenant.org.id, email, roles: ["editor"], language: "de", acceptedAt: null });
    expect(await prisma.user.count({ where: { organizationId: tenant.org.id, email } })).toBe(0);
    expect(await prisma.auditEntry.count({ where: { eventType: "user.invited", targetId: invitation.id } })).toBe(1);

    const existing = await create(tenant, { email: `${unique("exists")}@example.com` });
    expectError(await api.post(`${usersOf(tenant)}/invite`, { email: existing.body.email.toUpperCase() }), 409, "user_exists");
    expectError(await api.post(`${usersOf(tenant)}/invite/preview`, { email: existing.body.email }), 409, "user_exists");
    expect422(await api.post(`${usersOf(tenant)}/invite`, { email: "new@example.com", roles: ["no-such-role"] }), "roles.0");
  });

  it("previews the invitation mail without storing or sending anything", async () => {
    const prisma = porta.services.db.prisma;
    const invitations = await prisma.invitation.count();
    const res = await api.post<{ to: string; subject: string; html: string; text: string }>(`${usersOf(tenant)}/invite/preview`, { email: "Preview@Example.com", locale: "en" });
    expect(res.status).toBe(200);
    expect(res.body.to).toBe("preview@example.com");
    expect(res.body.subject.length).toBeGreaterThan(0);
    expect(res.body.html).toContain("<");
    expect(res.body.text.length).toBeGreaterThan(0);
    expect(await prisma.invitation.count()).toBe(invitations);
  });

  it("sets a password under the policy and ends the user's sessions; clears it likewise", async () => {
    const prisma = porta.services.db.prisma;
    const user = await createUser(prisma, tenant.org.id, { email: `${unique("pw")}@example.com`, password: PASSWORD });
    const path = `${usersOf(tenant)}/${user.id}/password`;
    const session = await signIn(tenant, { email: user.email, password: PASSWORD });
    expect(await userinfoStatus(tenant, session.accessToken)).toBe(200);

    expect422(await api.put(path, { password: "12345678" }), "password", "breached");
    expect(await userinfoStatus(tenant, session.accessToken)).toBe(200);

    const newPassword = "another long passphrase 7";
    const set = await api.put<User>(path, { password: newPassword });
    expect(set.status).toBe(200);
    expect(set.body).toMatchObject({ id: user.id, hasPassword: true });
    expect(await userinfoStatus(tenant, session.accessToken)).toBe(401);
    expect(await prisma.oidcPayload.count({ where: { accountId: user.id } })).toBe(0);
    await expect(signIn(tenant, { email: user.email, password: PASSWORD })).rejects.toThrow();
    const again = await signIn(tenant, { email: user.email, password: newPassword });
    expect(await userinfoStatus(tenant, again.accessToken)).toBe(200);

    const cleared = await api.delete<User>(path);
    expect(cleared.status).toBe(200);
    expect(cleared.body.hasPassword).toBe(false);
    expect((await prisma.user.findUniqueOrThrow({ where: { id: user.id } })).passwordHash).toBeNull();
    expect(await userinfoStatus(tenant, again.accessToken)).toBe(401);
    const audits = await prisma.auditEntry.findMany({ where: { targetId: user.id, eventType: { in: ["user.password_set", "user.password_cleared"] } } });
    expect(audits.map((a) => a.eventType).sort()).toEqual(["user.password_cleared", "user.password_set"]);
    expect(JSON.stringify(audits)).not.toContain(newPassword);
    expect(JSON.stringify(audits)).not.toContain("argon2");
    // Another organization's path does not reach the user.
    expectError(await api.put(`${usersOf(other)}/${user.id}/password`, { password: newPassword }), 404);
  });

  it("verifies the email, deactivates (ending sessions) and activates (lifting a lockout)", async () => {
    const prisma = porta.services.db.prisma;
    const user = await createUser(prisma, tenant.org.id, { email: `${unique("state")}@example.com`, password: PASSWORD, emailVerified: false });
    const base = `${usersOf(tenant)}/${user.id}`;
    const verified = await api.post<User>(`${base}/verify-email`);
    expect(verified.status).toBe(200);
    expect(verified.body.emailVerified).toBe(true);

    const session = await signIn(tenant, { email: user.email, password: PASSWORD });
    const deactivated = await api.post<User>(`${base}/deactivate`);
    expect(deactivated.status).toBe(200);
    expect(deactivated.body.status).toBe("inactive");
    expect(await userinfoStatus(tenant, session.accessToken)).toBe(401);
    await expect(signIn(tenant, { email: user.email, password: PASSWORD })).rejects.toThrow();

    await prisma.user.update({ where: { id: user.id }, data: { lockedUntil: new Date(Date.now() + 3_600_000), failedLoginCount: 10 } });
    const activated = await api.post<User>(`${base}/activate`);
    expect(activated.status).toBe(200);
    expect(activated.body).toMatchObject({ status: "active", lockedUntil: null });
    expect((await prisma.user.findUniqueOrThrow({ where: { id: user.id } })).failedLoginCount).toBe(0);
    const back = await signIn(tenant, { email: user.email, password: PASSWORD });
    expect(await userinfoStatus(tenant, back.accessToken)).toBe(200);

    const events = await prisma.auditEntry.findMany({ where: { targetId: user.id, actorType: "admin" }, orderBy: { id: "asc" } });
    expect(events.map((e) => e.eventType)).toEqual(["user.email_verified", "user.deactivated", "user.activated"]);
    // Versions moved with every write.
    expect((await api.get(base)).headers.get("etag")).toBe('"v4"');
  });

  it("refuses to deactivate or delete the calling admin", async () => {
    const superOrg = await porta.services.db.prisma.organization.findUniqueOrThrow({ where: { slug: porta.services.config.superAdminSlug } });
    expectError(await api.post(`/organizations/${superOrg.id}/users/${adminId}/deactivate`), 409, "self_modification");
    expectError(await api.post(`/users/${adminId}/deactivate`), 409, "self_modification");
    expectError(await api.delete(`/organizations/${superOrg.id}/users/${adminId}`), 409, "self_modification");
  });

  it("exports everything Porta holds about the user, never a hash", async () => {
    const prisma = porta.services.db.prisma;
    const user = await createUser(prisma, tenant.org.id, { email: `${unique("export")}@example.com`, password: PASSWORD });
    const role = await prisma.role.create({ data: { organizationId: tenant.org.id, name: unique("viewer") } });
    const permission = await prisma.permission.create({ data: { organizationId: tenant.org.id, name: unique("docs:read") } });
    await prisma.rolePermission.create({ data: { roleId: role.id, permissionId: permission.id } });
    await prisma.userRole.create({ data: { userId: user.id, roleId: role.id } });
    const app = await prisma.application.create({ data: { organizationId: tenant.org.id, name: unique("app") } });
    const claim = await prisma.customClaimDefinition.create({ data: { applicationId: app.id, claimName: "department", claimType: "string", scope: "profile" } });
    await prisma.customClaimValue.create({ data: { claimId: claim.id, userId: user.id, value: "research" } });
    await prisma.recoveryCode.create({ data: { userId: user.id, codeHash: "$argon2id$v=19$m=19456,t=2,p=1$c2FsdA$aGFzaA" } });
    await signIn(tenant, { email: user.email, password: PASSWORD });
    await signIn(tenant, { email: user.email, password: "wrong password here" }).catch(() => undefined);

    const res = await api.get<{
      user: User;
      organization: { id: string };
      roles: Array<{ name: string }>;
      permissions: string[];
      claimValues: Array<{ claimName: string; value: unknown; applicationName: string }>;
      twoFactor: { recoveryCodes: { total: number } };
      tokens: Array<{ model: string }>;
      auditEntries: Array<{ eventType: string }>;
    }>(`${usersOf(tenant)}/${user.id}/export`);
    expect(res.status).toBe(200);
    expect(res.body.user.id).toBe(user.id);
    expect(res.body.organization.id).toBe(tenant.org.id);
    expect(res.body.roles.map((r) => r.name)).toEqual([role.name]);
    expect(res.body.permissions).toEqual([permission.name]);
    expect(res.body.claimValues).toEqual([expect.objectContaining({ claimName: "department", value: "research", applicationName: app.name })]);
    expect(res.body.twoFactor.recoveryCodes.total).toBe(1);
    expect(res.body.tokens.length).toBeGreaterThan(0);
    const events = res.body.auditEntries.map((e) => e.eventType);
    expect(events).toContain("auth.login.success");
    expect(events).toContain("auth.login.failure");
    const text = JSON.stringify(res.body);
    expect(text).not.toContain("$argon2");
    expect(text).not.toMatch(/passwordHash|codeHash|secretEncrypted|tokenHash/);
    expectError(await api.get(`${usersOf(other)}/${user.id}/export`), 404);
  });

  it("deletes a user: 204, then 404, and their sessions end", async () => {
    const prisma = porta.services.db.prisma;
    const user = await createUser(prisma, tenant.org.id, { email: `${unique("del")}@example.com`, password: PASSWORD });
    const session = await signIn(tenant, { email: user.email, password: PASSWORD });
    expectError(await api.delete(`${usersOf(other)}/${user.id}`), 404);
    const res = await api.delete(`${usersOf(tenant)}/${user.id}`);
    expect(res.status).toBe(204);
    expect(res.body).toBeUndefined();
    expectError(await api.get(`${usersOf(tenant)}/${user.id}`), 404);
    expectError(await api.get(`/users/${user.id}`), 404);
    expect(await userinfoStatus(tenant, session.accessToken)).toBe(401);
    expect(await prisma.oidcPayload.count({ where: { accountId: user.id } })).toBe(0);
    expect(await prisma.auditEntry.count({ where: { eventType: "user.deleted", targetId: user.id } })).toBe(1);
    expectError(await api.delete(`${usersOf(tenant)}/${user.id}`), 404);
  });

  it("keeps a history with limit, after and eventType; an invalid after is 422", async () => {
    const user = (await create(tenant, { email: `${unique("hist")}@example.com` })).body;
    const base = `${usersOf(tenant)}/${user.id}`;
    await api.post(`${base}/deactivate`);
    await api.post(`${base}/activate`);
    await api.post(`${base}/verify-email`);
    const all = await api.get<History>(`${base}/history`);
    expect(all.status).toBe(200);
    expect(all.body.data.map((e) => e.eventType)).toEqual(["user.email_verified", "user.activated", "user.deactivated", "user.created"]);
    expect(all.body).toMatchObject({ hasMore: false, nextCursor: null });
    expect(all.body.data[0]).toMatchObject({ actorType: "admin", actorId: adminId });

    const first = await api.get<History>(`${base}/history?limit=3`);
    expect(first.body.data).toHaveLength(3);
    expect(first.body.hasMore).toBe(true);
    const rest = await api.get<History>(`${base}/history?limit=3&after=${first.body.nextCursor}`);
    expect(rest.body.data.map((e) => e.eventType)).toEqual(["user.created"]);
    expect(rest.body.hasMore).toBe(false);

    const filtered = await api.get<History>(`${base}/history?eventType=user.activated`);
    expect(filtered.body.data.map((e) => e.eventType)).toEqual(["user.activated"]);

    expect422(await api.get(`${base}/history?after=${BAD_CURSOR}`), "after");
    expect422(await api.get(`${base}/history?after=${FORGED_CURSOR}`), "after");
    expectError(await api.get(`${usersOf(other)}/${user.id}/history`), 404);
  });
});

describe("the organization-scoped update (PUT /organizations/{orgId}/users/{userId})", () => {
  it("updates with the ETag of the read; a stale If-Match is 409 and writes nothing", async () => {
    const user = (await create(tenant, { email: `${unique("scoped")}@example.com`, givenName: "Old" })).body;
    const path = `${usersOf(tenant)}/${user.id}`;
    const read = await api.get<User>(path);
    const etag = read.headers.get("etag")!;
    const res = await api.put<User>(path, { givenName: "New", locale: "de" }, { "if-match": etag });
    expect(res.status).toBe(200);
    expect(res.headers.get("etag")).toBe('"v2"');
    expect(res.body).toMatchObject({ id: user.id, organizationId: tenant.org.id, givenName: "New", locale: "de" });
    expect((await api.get<User>(`/users/${user.id}`)).body.givenName).toBe("New");
    const entries = await porta.services.db.prisma.auditEntry.findMany({ where: { eventType: "user.updated", targetId: user.id } });
    expect(entries).toHaveLength(1);
    expect(entries[0]!.organizationId).toBe(tenant.org.id);

    const before = await dataFingerprint(porta);
    expectError(await api.put(path, { givenName: "Lost update" }, { "if-match": etag }), 409, "etag_mismatch");
    expect(await dataFingerprint(porta)).toEqual(before);
    // Without If-Match the write goes through (the ETag is the caller's choice, as on every write).
    expect((await api.put<User>(path, { familyName: "Last" })).body).toMatchObject({ givenName: "New", familyName: "Last" });
  });

  it("answers 404 for another organization's user or an unknown one, and writes nothing", async () => {
    const mine = (await create(tenant, { email: `${unique("mine")}@example.com`, givenName: "Mine" })).body;
    const theirs = (await create(other, { email: `${unique("theirs")}@example.com`, givenName: "Theirs" })).body;
    const before = await dataFingerprint(porta);
    expectError(await api.put(`${usersOf(tenant)}/${theirs.id}`, { givenName: "Hijacked" }), 404, "not_found");
    expectError(await api.put(`${usersOf(other)}/${mine.id}`, { givenName: "Hijacked" }), 404, "not_found");
    expectError(await api.put(`${usersOf(tenant)}/00000000-0000-4000-8000-000000000000`, { givenName: "x" }), 404, "not_found");
    expectError(await api.put(`/organizations/00000000-0000-4000-8000-000000000000/users/${mine.id}`, { givenName: "x" }), 404, "not_found");
    expect(await dataFingerprint(porta)).toEqual(before);
    expect((await api.get<User>(`/users/${theirs.id}`)).body.givenName).toBe("Theirs");
  });

  it("refuses bad bodies with 422 like the update by id", async () => {
    const user = (await create(tenant, { email: `${unique("bad")}@example.com` })).body;
    const path = `${usersOf(tenant)}/${user.id}`;
    const before = await dataFingerprint(porta);
    expect422(await api.put(path, { email: "nobody" }), "email", "bad email");
    expect422(await api.put(path, { password: "a long passphrase 99" }), "password", "password not here");
    expect422(await api.put(path, { organizationId: other.org.id }), "organizationId", "not movable");
    expect422(await api.put(`${usersOf(tenant)}/42`, { givenName: "x" }), "path.userId", "not a UUID");
    expect(await dataFingerprint(porta)).toEqual(before);
  });
});

describe("users by id", () => {
  it("gets any organization's user with an ETag", async () => {
    const user = (await create(other, { email: `${unique("byid")}@example.com`, givenName: "Kay" })).body;
    const res = await api.get<User>(`/users/${user.id}`);
    expect(res.status).toBe(200);
    expect(res.headers.get("etag")).toBe('"v1"');
    expect(res.body).toEqual({ ...user, blocks: [] });
    expectError(await api.get("/users/00000000-0000-4000-8000-000000000000"), 404, "not_found");
  });

  it("updates with If-Match: of two writers holding the same ETag one wins and one gets 409", async () => {
    const user = (await create(tenant, { email: `${unique("race")}@example.com`, givenName: "Old" })).body;
    const read = await api.get<User>(`/users/${user.id}`);
    const etag = read.headers.get("etag")!;
    const [a, b] = await Promise.all([
      api.put<User>(`/users/${user.id}`, { givenName: "Writer A" }, { "if-match": etag }),
      api.put<User>(`/users/${user.id}`, { givenName: "Writer B" }, { "if-match": etag }),
    ]);
    expect([a.status, b.status].sort()).toEqual([200, 409]);
    const winner = a.status === 200 ? a : b;
    const loser = a.status === 200 ? b : a;
    expectError(loser, 409, "etag_mismatch");
    expect(winner.headers.get("etag")).toBe('"v2"');
    const now = await api.get<User>(`/users/${user.id}`);
    expect(now.body.givenName).toBe(winner.body.givenName);
    expect(now.headers.get("etag")).toBe('"v2"');
    // The loser, reading again, succeeds with the new ETag.
    const retry = await api.put<User>(`/users/${user.id}`, { givenName: "Writer C" }, { "if-match": now.headers.get("etag")! });
    expect(retry.status).toBe(200);
    expect(await porta.services.db.prisma.auditEntry.count({ where: { eventType: "user.updated", targetId: user.id } })).toBe(2);
  });

  it("updates profile fields; a new email is unverified; a taken email is 409", async () => {
    const taken = (await create(tenant, { email: `${unique("taken")}@example.com` })).body;
    const user = (await create(tenant, { email: `${unique("upd")}@example.com`, emailVerified: true })).body;
    const newEmail = `${unique("new")}@example.com`;
    const res = await api.put<User>(`/users/${user.id}`, { email: newEmail.toUpperCase(), givenName: "New", familyName: "Name", locale: "de" });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ email: newEmail, givenName: "New", familyName: "Name", locale: "de", emailVerified: false });
    const cleared = await api.put<User>(`/users/${user.id}`, { givenName: null, locale: null, emailVerified: true });
    expect(cleared.body).toMatchObject({ givenName: null, locale: null, emailVerified: true, email: newEmail });
    const before = await dataFingerprint(porta);
    expectError(await api.put(`/users/${user.id}`, { email: taken.email }), 409, "duplicate");
    expect(await dataFingerprint(porta)).toEqual(before);
    // The same address is free in another organization.
    const elsewhere = (await create(other, { email: `${unique("else")}@example.com` })).body;
    expect((await api.put(`/users/${elsewhere.id}`, { email: taken.email })).status).toBe(200);
    expectError(await api.put("/users/00000000-0000-4000-8000-000000000000", { givenName: "x" }), 404);
  });

  it("activates, deactivates (ending sessions) and verifies the email by id", async () => {
    const prisma = porta.services.db.prisma;
    const user = await createUser(prisma, tenant.org.id, { email: `${unique("idstate")}@example.com`, password: PASSWORD, emailVerified: false });
    const session = await signIn(tenant, { email: user.email, password: PASSWORD });
    const off = await api.post<User>(`/users/${user.id}/deactivate`);
    expect(off.status).toBe(200);
    expect(off.body.status).toBe("inactive");
    expect(await userinfoStatus(tenant, session.accessToken)).toBe(401);
    const on = await api.post<User>(`/users/${user.id}/activate`);
    expect(on.body.status).toBe("active");
    const verified = await api.post<User>(`/users/${user.id}/verify-email`);
    expect(verified.body.emailVerified).toBe(true);
    // A stale If-Match on a state change is 409 too.
    expectError(await api.post(`/users/${user.id}/deactivate`, undefined, { "if-match": '"v1"' }), 409, "etag_mismatch");
    expect((await prisma.user.findUniqueOrThrow({ where: { id: user.id } })).status).toBe("active");
  });

  it("returns the history envelope and accepts no parameters", async () => {
    const user = (await create(tenant, { email: `${unique("idhist")}@example.com` })).body;
    await api.put(`/users/${user.id}`, { givenName: "Changed" });
    const res = await api.get<History>(`/users/${user.id}/history`);
    expect(res.status).toBe(200);
    expect(res.body.data.map((e) => e.eventType)).toEqual(["user.updated", "user.created"]);
    expect(res.body).toMatchObject({ hasMore: false, nextCursor: null });
    expect422(await api.get(`/users/${user.id}/history?limit=1`), "query.limit");
    expectError(await api.get("/users/00000000-0000-4000-8000-000000000000/history"), 404);
  });
});

describe("bad input", () => {
  it("answers 422 with field details for every route and writes nothing", async () => {
    const user = (await create(tenant, { email: `${unique("bad")}@example.com` })).body;
    const org = usersOf(tenant);
    const u = `${org}/${user.id}`;
    const cases: BadRequest[] = [
      // GET,POST /organizations/{orgId}/users
      { label: "list: orgId not a UUID", method: "GET", path: "/organizations/nope/users", field: "path.orgId" },
      { label: "list: pageSize a word", method: "GET", path: `${org}?pageSize=ten`, field: "query.pageSize" },
      { label: "list: pageSize too big", method: "GET", path: `${org}?pageSize=1000`, field: "query.pageSize" },
      { label: "list: unknown parameter", method: "GET", path: `${org}?role=admin`, field: "query.role" },
      { label: "list: oversize q", method: "GET", path: `${org}?q=${"x".repeat(201)}`, field: "query.q" },
      { label: "list: unknown status", method: "GET", path: `${org}?status=locked`, field: "query.status" },
      { label: "list: unknown sort", method: "GET", path: `${org}?sort=passwordHash`, field: "query.sort" },
      { label: "list: invalid cursor", method: "GET", path: `${org}?cursor=${BAD_CURSOR}`, field: "cursor" },
      { label: "list: forged cursor", method: "GET", path: `${org}?cursor=${FORGED_CURSOR}`, field: "cursor" },
      { label: "list: cursor with page", method: "GET", path: `${org}?limit=2&page=1`, field: "cursor" },
      { label: "create: orgId not a UUID", method: "POST", path: "/organizations/nope/users", body: { email: "a@example.com" }, field: "path.orgId" },
      { label: "create: no email", method: "POST", path: org, body: { givenName: "A" }, field: "email" },
      { label: "create: email not an address", method: "POST", path: org, body: { email: "not-an-email" }, field: "email" },
      { label: "create: email a number", method: "POST", path: org, body: { email: 42 }, field: "email" },
      { label: "create: oversize email", method: "POST", path: org, body: { email: `${OVERSIZE}@example.com` }, field: "email" },
      { label: "create: oversize givenName", method: "POST", path: org, body: { email: "a@example.com", givenName: OVERSIZE }, field: "givenName" },
      { label: "create: familyName a list", method: "POST", path: org, body: { email: "a@example.com", familyName: ["a"] }, field: "familyName" },
      { label: "create: emailVerified a string", method: "POST", path: org, body: { email: "a@example.com", emailVerified: "yes" }, field: "emailVerified" },
      { label: "create: unknown locale", method: "POST", path: org, body: { email: "a@example.com", locale: "xx" }, field: "locale" },
      { label: "create: password a number", method: "POST", path: org, body: { email: "a@example.com", password: 12345678 }, field: "password" },
      { label: "create: oversize password", method: "POST", path: org, body: { email: "a@example.com", password: OVERSIZE }, field: "password" },
      { label: "create: unknown field", method: "POST", path: org, body: { email: "a@example.com", passwordHash: "x" }, field: "passwordHash" },
      { label: "create: status not settable", method: "POST", path: org, body: { email: "a@example.com", status: "inactive" }, field: "status" },
      { label: "create: body a list", method: "POST", path: org, body: [{ email: "a@example.com" }], field: "body" },
      { label: "create: organizationId not a UUID", method: "POST", path: org, body: { email: "a@example.com", organizationId: "x" }, field: "organizationId" },
      // invite, invite/preview
      { label: "invite: no email", method: "POST", path: `${org}/invite`, body: {}, field: "email" },
      { label: "invite: bad email", method: "POST", path: `${org}/invite`, body: { email: "x@" }, field: "email" },
      { label: "invite: roles not a list", method: "POST", path: `${org}/invite`, body: { email: "a@example.com", roles: "admin" }, field: "roles" },
      { label: "invite: oversize role", method: "POST", path: `${org}/invite`, body: { email: "a@example.com", roles: [OVERSIZE] }, field: "roles.0" },
      { label: "invite: unknown field", method: "POST", path: `${org}/invite`, body: { email: "a@example.com", password: "p" }, field: "password" },
      { label: "invite: orgId not a UUID", method: "POST", path: "/organizations/1/users/invite", body: { email: "a@example.com" }, field: "path.orgId" },
      { label: "preview: unknown locale", method: "POST", path: `${org}/invite/preview`, body: { email: "a@example.com", locale: 3 }, field: "locale" },
      { label: "preview: oversize givenName", method: "POST", path: `${org}/invite/preview`, body: { email: "a@example.com", givenName: OVERSIZE }, field: "givenName" },
      { label: "preview: unknown field", method: "POST", path: `${org}/invite/preview`, body: { email: "a@example.com", send: true }, field: "send" },
      // GET,DELETE …/users/{userId}
      { label: "get: userId not a UUID", method: "GET", path: `${org}/123`, field: "path.userId" },
      { label: "get: unknown query", method: "GET", path: `${u}?x=1`, field: "query.x" },
      { label: "delete: userId not a UUID", method: "DELETE", path: `${org}/abc`, field: "path.userId" },
      { label: "delete: orgId not a UUID", method: "DELETE", path: `/organizations/abc/users/${user.id}`, field: "path.orgId" },
      // PUT,DELETE …/password
      { label: "password: missing", method: "PUT", path: `${u}/password`, body: {}, field: "password" },
      { label: "password: a number", method: "PUT", path: `${u}/password`, body: { password: 123456789 }, field: "password" },
      { label: "password: oversize", method: "PUT", path: `${u}/password`, body: { password: OVERSIZE }, field: "password" },
      { label: "password: too short (policy)", method: "PUT", path: `${u}/password`, body: { password: "short" }, field: "password" },
      { label: "password: unknown field", method: "PUT", path: `${u}/password`, body: { password: "a long passphrase 99", hash: "x" }, field: "hash" },
      { label: "clear password: userId not a UUID", method: "DELETE", path: `${org}/x/password`, field: "path.userId" },
      // state changes, export, history
      { label: "verify-email: userId not a UUID", method: "POST", path: `${org}/x/verify-email`, field: "path.userId" },
      { label: "activate: orgId not a UUID", method: "POST", path: `/organizations/x/users/${user.id}/activate`, field: "path.orgId" },
      { label: "deactivate: userId not a UUID", method: "POST", path: `${org}/x/deactivate`, field: "path.userId" },
      { label: "export: userId not a UUID", method: "GET", path: `${org}/x/export`, field: "path.userId" },
      { label: "history: limit 0", method: "GET", path: `${u}/history?limit=0`, field: "query.limit" },
      { label: "history: limit a word", method: "GET", path: `${u}/history?limit=many`, field: "query.limit" },
      { label: "history: invalid after", method: "GET", path: `${u}/history?after=${BAD_CURSOR}`, field: "after" },
      { label: "history: oversize after", method: "GET", path: `${u}/history?after=${OVERSIZE}`, field: "query.after" },
      { label: "history: bad eventType", method: "GET", path: `${u}/history?eventType=${encodeURIComponent("DROP TABLE")}`, field: "query.eventType" },
      { label: "history: unknown parameter", method: "GET", path: `${u}/history?page=2`, field: "query.page" },
      // by id
      { label: "by id get: not a UUID", method: "GET", path: "/users/42", field: "path.id" },
      { label: "by id update: not a UUID", method: "PUT", path: "/users/42", body: { givenName: "x" }, field: "path.id" },
      { label: "by id update: email a bool", method: "PUT", path: `/users/${user.id}`, body: { email: true }, field: "email" },
      { label: "by id update: bad email", method: "PUT", path: `/users/${user.id}`, body: { email: "nobody" }, field: "email" },
      { label: "by id update: oversize familyName", method: "PUT", path: `/users/${user.id}`, body: { familyName: OVERSIZE }, field: "familyName" },
      { label: "by id update: empty givenName", method: "PUT", path: `/users/${user.id}`, body: { givenName: "   " }, field: "givenName" },
      { label: "by id update: emailVerified a number", method: "PUT", path: `/users/${user.id}`, body: { emailVerified: 1 }, field: "emailVerified" },
      { label: "by id update: unknown locale", method: "PUT", path: `/users/${user.id}`, body: { locale: "klingon" }, field: "locale" },
      { label: "by id update: password not here", method: "PUT", path: `/users/${user.id}`, body: { password: "a long passphrase 99" }, field: "password" },
      { label: "by id update: organizationId not movable", method: "PUT", path: `/users/${user.id}`, body: { organizationId: other.org.id }, field: "organizationId" },
      { label: "by id activate: not a UUID", method: "POST", path: "/users/x/activate", field: "path.id" },
      { label: "by id deactivate: not a UUID", method: "POST", path: "/users/x/deactivate", field: "path.id" },
      { label: "by id verify-email: not a UUID", method: "POST", path: "/users/x/verify-email", field: "path.id" },
      { label: "by id history: not a UUID", method: "GET", path: "/users/x/history", field: "path.id" },
      { label: "by id clear block: not a block's id", method: "DELETE", path: `/users/${user.id}/blocks/rl%3ApasswordLogin`, field: "path.blockId" },
      { label: "clear block: not a UUID", method: "DELETE", path: `${usersOf(tenant)}/x/blocks/lockout`, field: "path.userId" },
      { label: "by id history: after not accepted", method: "GET", path: `/users/${user.id}/history?after=${BAD_CURSOR}`, field: "query.after" },
      { label: "by id history: eventType not accepted", method: "GET", path: `/users/${user.id}/history?eventType=user.updated`, field: "query.eventType" },
    ];
    const before = await dataFingerprint(porta);
    for (const c of cases) expect422(await api.call(c.method, c.path, c.body), c.field, c.label);
    expect(await dataFingerprint(porta)).toEqual(before);
    expect((await api.get<User>(`/users/${user.id}`)).body).toEqual({ ...user, blocks: [] });
  });
});
