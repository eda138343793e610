import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  PortaAdmin,
  PortaAuthenticationError,
  PortaConflictError,
  PortaError,
  PortaForbiddenError,
  PortaNotFoundError,
  PortaValidationError,
  staticToken,
} from "../../packages/admin-client/src/index";
import { obtainAdminTokens } from "../support/admin-api";
import { startTestPorta, type TestPorta } from "../support/porta";
import { dataFingerprint, signIn, tenantOf, unique, userinfoStatus } from "../admin/helpers";
import { withoutPermission } from "../admin/resources";

/**
 * The admin client library against a real Porta with a real admin token: every namespace makes
 * at least one real call, the main areas every operation, and each error class comes from a
 * real response.
 */
let porta: TestPorta;
let admin: PortaAdmin;

beforeAll(async () => {
  porta = await startTestPorta();
  const { accessToken } = await obtainAdminTokens(porta);
  admin = new PortaAdmin({ baseUrl: porta.url, auth: staticToken(accessToken) });
});
afterAll(async () => {
  await porta?.stop();
});

async function rejection(promise: Promise<unknown>): Promise<PortaError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(PortaError);
  return error as PortaError;
}

describe("organizations", () => {
  it("runs every operation, with ETags returned and honoured", async () => {
    const slug = unique("sdk");
    expect(await admin.organizations.validateSlug({ slug })).toMatchObject({ available: true });
    const created = await admin.organizations.create({ name: "SDK Org", slug });
    expect(created.data).toMatchObject({ slug, status: "active" });
    expect(created.etag).toMatch(/^"/);
    expect(await admin.organizations.validateSlug({ slug })).toMatchObject({ available: false });

    const read = await admin.organizations.get(created.data.id);
    expect(read.data.name).toBe("SDK Org");
    const updated = await admin.organizations.update(created.data.id, { name: "SDK Org 2" }, { ifMatch: read.etag });
    expect(updated.data.name).toBe("SDK Org 2");
    expect(updated.etag).not.toBe(read.etag);

    // The stale ETag of the first read is now a conflict, and nothing changes.
    const stale = await rejection(admin.organizations.update(created.data.id, { name: "lost update" }, { ifMatch: read.etag }));
    expect(stale).toBeInstanceOf(PortaConflictError);
    expect(stale.status).toBe(409);
    expect(stale.code).toBe("etag_mismatch");
    expect(stale.requestId).toMatch(/\S/);
    expect((await admin.organizations.get(created.data.id)).data.name).toBe("SDK Org 2");

    expect((await admin.organizations.suspend(created.data.id)).data.status).toBe("suspended");
    expect((await admin.organizations.activate(created.data.id)).data.status).toBe("active");

    const page = await admin.organizations.list({ page: 1, pageSize: 5, q: slug });
    expect(page.data.map((o) => o.id)).toEqual([created.data.id]);
    expect(page.total).toBe(1);

    const history = await admin.organizations.getHistory(created.data.id, { limit: 2 });
    expect(history.data).toHaveLength(2);
    expect(history.hasMore).toBe(true);
    const rest = await admin.organizations.getHistory(created.data.id, { limit: 10, after: history.nextCursor! });
    expect(rest.data.length).toBeGreaterThan(0);
    const updates = await admin.organizations.getHistory(created.data.id, { eventType: "organization.updated" });
    expect(updates.data.map((e) => e.eventType)).toEqual(["organization.updated"]);

    await admin.organizations.delete(created.data.id);
    expect(await rejection(admin.organizations.get(created.data.id))).toBeInstanceOf(PortaNotFoundError);
  });

  it("lists every page with listAll, in cursor and offset form", async () => {
    const prefix = unique("many");
    const ids = new Set<string>();
    for (let i = 0; i < 7; i++) ids.add((await admin.organizations.create({ name: `${prefix} ${i}`, slug: `${prefix}-${i}` })).data.id);
    const seen: string[] = [];
    for await (const org of admin.organizations.listAll({ q: prefix, limit: 3 })) seen.push(org.id);
    expect(seen).toHaveLength(7);
    expect(new Set(seen)).toEqual(ids);
    const offset: string[] = [];
    for await (const org of admin.organizations.listAll({ q: prefix, pageSize: 2 })) offset.push(org.id);
    expect(new Set(offset)).toEqual(ids);
    expect(offset).toHaveLength(7);
  });
});

describe("users", () => {
  it("runs every organization-scoped and by-id operation", async () => {
    const org = (await admin.organizations.create({ name: "Users Org", slug: unique("users") })).data;
    const email = `${unique("u")}@example.com`;
    const created = await admin.users.create(org.id, { email, givenName: "Ada", password: "a long test password 1" });
    expect(created.etag).toMatch(/^"/);
    const userId = created.data.id;
    expect((await admin.users.get(org.id, userId)).data.email).toBe(email);
    expect((await admin.users.list(org.id, { q: "Ada" })).data.map((u) => u.id)).toEqual([userId]);
    const all: string[] = [];
    for await (const u of admin.users.listAll(org.id)) all.push(u.id);
    expect(all).toEqual([userId]);

    const previewEmail = `${unique("p")}@example.com`;
    const preview = await admin.users.invitePreview(org.id, { email: previewEmail });
    expect(preview.to).toBe(previewEmail);
    expect(preview.text.length).toBeGreaterThan(0);
    const invitedEmail = `${unique("i")}@example.com`;
    const invited = await admin.users.invite(org.id, { email: invitedEmail, givenName: "Inv" });
    expect(invited.email).toBe(invitedEmail);
    expect(typeof invited.invitationSent).toBe("boolean");
    expect(typeof invited.invitationId).toBe("string");

    await admin.users.clearPassword(org.id, userId);
    await admin.users.setPassword(org.id, userId, { password: "another long password 2" });
    await admin.users.verifyEmail(org.id, userId);
    await admin.users.deactivate(org.id, userId);
    expect((await admin.usersById.get(userId)).data.status).not.toBe("active");
    await admin.users.activate(org.id, userId);
    const exported = await admin.users.exportData(org.id, userId);
    expect(JSON.stringify(exported)).toContain(email);
    const history = await admin.users.getHistory(org.id, userId, { limit: 50 });
    expect(history.data.length).toBeGreaterThan(3);

    // The organization-scoped update, with the ETag of the organization-scoped read.
    const scoped = await admin.users.get(org.id, userId);
    const given = await admin.users.update(org.id, userId, { givenName: "Augusta" }, { ifMatch: scoped.etag });
    expect(given.data.givenName).toBe("Augusta");
    expect(given.etag).not.toBe(scoped.etag);
    expect(await rejection(admin.users.update(org.id, userId, { givenName: "Stale" }, { ifMatch: scoped.etag }))).toBeInstanceOf(PortaConflictError);

    const byId = await admin.usersById.get(userId);
    expect(byId.data.status).toBe("active");
    const renamed = await admin.usersById.update(userId, { familyName: "Lovelace" }, { ifMatch: byId.etag });
    expect(renamed.data.familyName).toBe("Lovelace");
    expect(await rejection(admin.usersById.update(userId, { familyName: "Stale" }, { ifMatch: byId.etag }))).toBeInstanceOf(PortaConflictError);
    await admin.usersById.deactivate(userId);
    await admin.usersById.activate(userId);
    await admin.usersById.verifyEmail(userId);
    const byIdHistory = await admin.usersById.getHistory(userId);
    expect(byIdHistory.data.length).toBeGreaterThan(0);

    await admin.users.delete(org.id, userId);
    expect(await rejection(admin.users.get(org.id, userId))).toBeInstanceOf(PortaNotFoundError);
  });
});

describe("applications, clients and custom claims", () => {
  it("runs every client operation", async () => {
    const org = (await admin.organizations.create({ name: "Clients Org", slug: unique("cl") })).data;
    const app = await admin.applications.create({ organizationId: org.id, name: "App" });
    const created = await admin.clients.create({ organizationId: org.id, applicationId: app.data.id, name: "Web", clientType: "confidential", redirectUris: ["https://rp.example.com/cb"] });
    const id = created.data.id;
    const read = await admin.clients.get(id);
    const updated = await admin.clients.update(id, { name: "Web 2" }, { ifMatch: read.etag });
    expect(updated.data.name).toBe("Web 2");
    expect((await admin.clients.list({ organizationId: org.id })).data.map((c) => c.id)).toContain(id);
    const listed: string[] = [];
    for await (const c of admin.clients.listAll({ organizationId: org.id })) listed.push(c.id);
    expect(listed).toContain(id);
    const secret = await admin.clients.generateSecret(id, { label: "ci" });
    const secrets = await admin.clients.listSecrets(id);
    expect(secrets.data.length).toBeGreaterThanOrEqual(1);
    await admin.clients.revokeSecret(id, (secret as { id: string }).id);
    expect((await admin.clients.setLoginMethods(id, { loginMethods: ["magic_link"] })).data.loginMethods).toEqual(["magic_link"]);
    expect((await admin.clients.clearLoginMethods(id)).data.loginMethods ?? null).toBeNull();
    await admin.clients.deactivate(id);
    await admin.clients.activate(id);
    expect((await admin.clients.getHistory(id)).data.length).toBeGreaterThan(0);
    await admin.clients.delete(id);
    expect(await rejection(admin.clients.get(id))).toBeInstanceOf(PortaNotFoundError);
  });

  it("runs every application and custom-claim operation", async () => {
    const org = (await admin.organizations.create({ name: "Apps Org", slug: unique("ap") })).data;
    const app = await admin.applications.create({ organizationId: org.id, name: "App" });
    const appId = app.data.id;
    const read = await admin.applications.get(appId);
    await admin.applications.update(appId, { name: "App 2" }, { ifMatch: read.etag });
    expect((await admin.applications.list({ organizationId: org.id })).data.map((a) => a.id)).toEqual([appId]);
    const module = await admin.applications.addModule(appId, { name: "billing" });
    expect((await admin.applications.listModules(appId)).data).toHaveLength(1);
    await admin.applications.updateModule(appId, module.id, { name: "billing-2" });
    await admin.applications.deactivateModule(appId, module.id);
    await admin.applications.deleteModule(appId, module.id);
    await admin.applications.deactivate(appId);
    await admin.applications.activate(appId);
    expect((await admin.applications.getHistory(appId)).data.length).toBeGreaterThan(0);

    const user = (await admin.users.create(org.id, { email: `${unique("c")}@example.com` })).data;
    const claim = await admin.customClaims.create(appId, { claimName: "department", claimType: "string", scope: "hr" });
    expect((await admin.customClaims.get(appId, claim.id)).claimName).toBe("department");
    await admin.customClaims.update(appId, claim.id, { description: "Where they work" });
    expect((await admin.customClaims.list(appId)).data).toHaveLength(1);
    const claims: string[] = [];
    for await (const c of admin.customClaims.listAll(appId)) claims.push(c.id);
    expect(claims).toEqual([claim.id]);
    await admin.customClaims.setValue(appId, claim.id, user.id, { value: "R&D" });
    expect(await admin.customClaims.getValue(appId, claim.id, user.id)).toMatchObject({ value: "R&D" });
    expect(JSON.stringify(await admin.customClaims.getValuesForUser(user.id))).toContain("R&D");
    await admin.customClaims.deleteValue(appId, claim.id, user.id);
    expect(await rejection(admin.customClaims.getValue(appId, claim.id, user.id))).toBeInstanceOf(PortaNotFoundError);
    await admin.customClaims.delete(appId, claim.id);
    await admin.applications.delete(appId);
  });
});

describe("every other namespace", () => {
  it("makes real calls in each", async () => {
    const org = (await admin.organizations.create({ name: "Misc Org", slug: unique("misc") })).data;
    const user = (await admin.users.create(org.id, { email: `${unique("m")}@example.com` })).data;
    const permission = await admin.permissions.create({ organizationId: org.id, name: "reports:read" });
    expect((await admin.permissions.get(permission.id)).name).toBe("reports:read");
    expect((await admin.permissions.list({ organizationId: org.id })).data).toHaveLength(1);
    const perms: string[] = [];
    for await (const p of admin.permissions.listAll({ organizationId: org.id })) perms.push(p.id);
    expect(perms).toEqual([permission.id]);
    const role = await admin.roles.create({ organizationId: org.id, name: "analyst" });
    await admin.roles.assignPermission(role.data.id, permission.id);
    expect((await admin.roles.get(role.data.id)).data.name).toBe("analyst");
    // Beside the organization's own administration roles every organization has (decision 090).
    expect((await admin.roles.list({ organizationId: org.id })).data.map((r) => r.name).sort()).toEqual(["analyst", "org-admin", "org-auditor"]);
    await admin.roles.update(role.data.id, { description: "Reads reports" });
    await admin.userRoles.assign(user.id, role.data.id);
    expect(JSON.stringify(await admin.userRoles.list(user.id))).toContain("analyst");
    expect(JSON.stringify(await admin.userRoles.getEffectivePermissions(user.id))).toContain("reports:read");
    await admin.userRoles.remove(user.id, role.data.id);
    await admin.roles.removePermission(role.data.id, permission.id);
    await admin.permissions.delete(permission.id);

    expect(JSON.stringify(await admin.config.list())).toContain("auth.passwordMinLength");
    await admin.config.set("auth.passwordMinLength", { value: 10 });
    expect(await admin.config.get("auth.passwordMinLength")).toMatchObject({ value: 10 });
    const keys = await admin.keys.listByOrganization(org.id);
    expect(keys.data).toMatchObject([{ alg: "ES256", status: "active", organizationId: org.id }]);
    const staged = await admin.keys.generate(org.id);
    expect(staged).toMatchObject({ alg: "ES256", status: "staged", organizationId: org.id });
    const rotated = await admin.keys.rotate(org.id);
    expect(rotated).toMatchObject({ kid: staged.kid, alg: "ES256", status: "active", organizationId: org.id });
    const everyKey: string[] = [];
    for await (const key of admin.keys.listAll({ organizationId: org.id, limit: 1 })) everyKey.push(key.kid);
    expect(everyKey.sort()).toEqual([keys.data[0]!.kid, staged.kid].sort());
    expect((await admin.keys.list({ organizationId: org.id })).total).toBe(2);
    expect((await admin.keys.rotateAll()).rotatedOrganizations).toBeGreaterThanOrEqual(2);

    const audit = await admin.audit.list({ organizationId: org.id, limit: 2 });
    expect(audit.data).toHaveLength(2);
    let entries = 0;
    for await (const _entry of admin.audit.listAll({ organizationId: org.id, limit: 2 })) entries++;
    expect(entries).toBeGreaterThan(2);

    expect((await admin.stats.get()).organizations.total).toBeGreaterThanOrEqual(2);
    expect((await admin.sessions.list({ organizationId: org.id })).data).toEqual([]);
    // A user of the organization signs in at a client: that grant is a session; revoking it ends the tokens.
    const tenant = await tenantOf(porta, org);
    const signer = { email: `${unique("s")}@example.com`, password: "a long test password 1" };
    await admin.users.create(org.id, { ...signer, emailVerified: true });
    const signedIn = await signIn(tenant, signer);
    expect(await userinfoStatus(tenant, signedIn.accessToken)).toBe(200);
    const sessions = await admin.sessions.list({ organizationId: org.id });
    expect(sessions.data).toHaveLength(1);
    await admin.sessions.revoke(sessions.data[0]!.id);
    expect((await admin.sessions.list({ organizationId: org.id })).data).toEqual([]);
    expect(await userinfoStatus(tenant, signedIn.accessToken)).toBe(401);
    await admin.sessions.revokeForUser(user.id);
    expect(await rejection(admin.sessions.revoke("00000000-0000-4000-8000-000000000000"))).toBeInstanceOf(PortaNotFoundError);

    expect(await admin.twoFactor.getStatus(user.id)).toMatchObject({ userId: user.id, totp: { enrolled: false } });
    const policy = await admin.twoFactor.getPolicy(org.id);
    expect((await admin.twoFactor.setPolicy(org.id, { policy: "required_any" }, { ifMatch: policy.etag })).data).toMatchObject({ policy: "required_any" });
    expect((await admin.twoFactor.getSummary()).data.find((o) => o.organizationId === org.id)).toMatchObject({ policy: "required_any" });
    await admin.twoFactor.disable(user.id);
    const notEnrolled = await rejection(admin.twoFactor.regenerateRecoveryCodes(user.id));
    expect(notEnrolled).toBeInstanceOf(PortaConflictError);
    expect(notEnrolled.code).toBe("not_enrolled");
    expect(await admin.twoFactor.reset(user.id)).toMatchObject({ userId: user.id, totp: { enrolled: false } });

    expect(await admin.metadata.get()).toMatchObject({ clientId: "porta-admin" });
    expect(await admin.openapi.get()).toMatchObject({ openapi: "3.1.0" });
  });
});

describe("typed errors from real responses", () => {
  it("401 for a bad token", async () => {
    const bad = new PortaAdmin({ baseUrl: porta.url, auth: staticToken("not-a-token") });
    const error = await rejection(bad.organizations.list());
    expect(error).toBeInstanceOf(PortaAuthenticationError);
    expect(error).toMatchObject({ status: 401, code: "unauthorized" });
    expect(error.requestId).toMatch(/\S/);
  });

  it("403 for an admin without the permission", async () => {
    await withoutPermission(porta, "admin:org:read", async () => {
      const error = await rejection(admin.organizations.list());
      expect(error).toBeInstanceOf(PortaForbiddenError);
      expect(error).toMatchObject({ status: 403, code: "forbidden" });
    });
  });

  it("404 for an unknown organization", async () => {
    const error = await rejection(admin.organizations.get("00000000-0000-4000-8000-000000000000"));
    expect(error).toBeInstanceOf(PortaNotFoundError);
    expect(error).toMatchObject({ status: 404, code: "not_found" });
  });

  it("422 with field details, and nothing written", async () => {
    const before = await dataFingerprint(porta);
    const error = await rejection(admin.organizations.create({ name: "", slug: "Not A Slug!" }));
    expect(error).toBeInstanceOf(PortaValidationError);
    expect(error.status).toBe(422);
    expect(error.details?.map((d) => d.field)).toEqual(expect.arrayContaining(["name", "slug"]));
    expect(await dataFingerprint(porta)).toEqual(before);
    const cursor = await rejection(admin.organizations.list({ cursor: "not-a-cursor" }));
    expect(cursor).toBeInstanceOf(PortaValidationError);
    expect(cursor.details?.[0]?.field).toBe("cursor");
  });

  it("409 for a duplicate slug", async () => {
    const slug = unique("dup");
    await admin.organizations.create({ name: "One", slug });
    const error = await rejection(admin.organizations.create({ name: "Two", slug }));
    expect(error).toBeInstanceOf(PortaConflictError);
    expect(error.status).toBe(409);
  });
});
