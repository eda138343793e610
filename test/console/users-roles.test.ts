import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { adminApi, obtainAdminTokens } from "../support/admin-api";
import { createUser } from "../support/factories";
import { startTestPorta, type TestPorta } from "../support/porta";
import { createTenant, PASSWORD, signIn, tenantOf, unique, userinfoStatus } from "../admin/helpers";
import { consoleSignIn, pageWithCsrf, type ConsoleVisit } from "./helpers";
import type { EffectivePermissions } from "~/schemas/rbac";

/**
 * The console's user and role pages as a browser drives them: creating a user without an
 * invitation (who then signs in through the real login page), editing a profile with the ETag
 * conflict view, one session revoked among several, the history, deleting a user; renaming a
 * role, granting and taking its permissions (seen in a holder's effective permissions),
 * deleting a permission; and every form refused without its CSRF token.
 */
let porta: TestPorta;
/** Signed in once: the login rate limit counts per account. */
let admin: ConsoleVisit;
let api: ReturnType<typeof adminApi>;

beforeAll(async () => {
  porta = await startTestPorta();
  admin = await consoleSignIn(porta);
  api = adminApi(porta, (await obtainAdminTokens(porta)).accessToken);
});
afterAll(async () => {
  await porta?.stop();
});

const prisma = () => porta.services.db.prisma;
const versionOf = (html: string) => /name="version" value="(\d+)"/.exec(html)![1]!;
/** The page a redirect leads to, as text. */
async function landing(res: Response): Promise<string> {
  expect(res.status).toBe(302);
  return (await admin.browser.get(`${porta.baseUrl}${res.headers.get("location")!}`)).text();
}
const effectiveOf = async (userId: string) => (await api.get<EffectivePermissions>(`/users/${userId}/effective-permissions`)).body.permissions.map((p) => p.name);

describe("creating a user without an invitation", () => {
  it("creates the user with a password, who then signs in through the real login page", async () => {
    const tenant = await createTenant(porta);
    const url = `${porta.baseUrl}/console/organizations/${tenant.org.id}/users`;
    const { csrf, html } = await pageWithCsrf(admin.browser, url);
    expect(html).toContain("Create a user");
    expect(html).toContain("Initial password (optional)");
    const invitations = await prisma().invitation.count();

    const password = "a first long password 7";
    const res = await admin.browser.post(url, { csrf, intent: "create", newEmail: "Ada@Create.Example", newGivenName: "Ada", newFamilyName: "Byron", newPassword: password, newLocale: "de", newEmailVerified: "on" });
    const user = await prisma().user.findFirstOrThrow({ where: { organizationId: tenant.org.id, email: "ada@create.example" } });
    expect(res.headers.get("location")).toBe(`/console/organizations/${tenant.org.id}/users/${user.id}?done=created`);
    const page = await landing(res);
    expect(page).toContain("The user was created.");
    expect(page).toContain("<h1>ada@create.example</h1>");
    expect(page).not.toContain(password);
    expect(user).toMatchObject({ givenName: "Ada", familyName: "Byron", locale: "de", status: "active", emailVerified: true });
    expect(user.passwordHash).not.toBeNull();
    expect(await prisma().invitation.count()).toBe(invitations);
    expect(await prisma().auditEntry.findFirst({ where: { eventType: "user.created", targetId: user.id, actorType: "admin" } })).not.toBeNull();

    const signedIn = await signIn(tenant, { email: "ada@create.example", password });
    expect(await userinfoStatus(tenant, signedIn.accessToken)).toBe(200);

    // Without a password the account exists but has none.
    const plain = await admin.browser.post(url, { csrf, intent: "create", newEmail: "nopass@create.example", newGivenName: "", newFamilyName: "", newPassword: "", newLocale: "" });
    expect(plain.status).toBe(302);
    const nopass = await prisma().user.findFirstOrThrow({ where: { organizationId: tenant.org.id, email: "nopass@create.example" } });
    expect(nopass).toMatchObject({ passwordHash: null, givenName: null, locale: null, emailVerified: false });
    expect(await landing(plain)).toMatch(/Has a password<\/dt><dd>no<\/dd>/);
  });

  it("keeps bad input next to its field and writes nothing", async () => {
    const tenant = await createTenant(porta);
    const url = `${porta.baseUrl}/console/organizations/${tenant.org.id}/users`;
    const { csrf } = await pageWithCsrf(admin.browser, url);
    const count = () => prisma().user.count({ where: { organizationId: tenant.org.id } });

    const bad = await admin.browser.post(url, { csrf, intent: "create", newEmail: "not an address", newGivenName: "Ada", newPassword: "", newLocale: "xx" });
    expect(bad.status).toBe(422);
    const html = await bad.text();
    expect(html).toMatch(/id="newEmail-error"[^>]*>must be an email address</);
    expect(html).toMatch(/id="newLocale-error"/);
    // What was typed stays in the form.
    expect(html).toMatch(/<input id="newGivenName"[^>]* value="Ada"/);

    const weak = await admin.browser.post(url, { csrf, intent: "create", newEmail: "weak@create.example", newPassword: "short" });
    expect(weak.status).toBe(422);
    const weakHtml = await weak.text();
    expect(weakHtml).toMatch(/id="newPassword-error"/);
    expect(weakHtml).not.toContain('value="short"');
    expect(await count()).toBe(0);
  });

  it("shows the 409 message next to the email field for an address already taken", async () => {
    const tenant = await createTenant(porta);
    await createUser(prisma(), tenant.org.id, { email: "taken@create.example" });
    const url = `${porta.baseUrl}/console/organizations/${tenant.org.id}/users`;
    const { csrf } = await pageWithCsrf(admin.browser, url);
    const res = await admin.browser.post(url, { csrf, intent: "create", newEmail: "TAKEN@create.example", newGivenName: "Other" });
    expect(res.status).toBe(409);
    expect(await res.text()).toMatch(/id="newEmail-error"[^>]*>A resource with this email already exists\.</);
    expect(await prisma().user.count({ where: { organizationId: tenant.org.id } })).toBe(1);
  });
});

describe("the user list's count", () => {
  it("says how many users the list covers; past 1,000 matches \"1,000+\", in English and German", async () => {
    const tenant = await createTenant(porta);
    await porta.services.db.executeSql(
      `INSERT INTO "User" ("id", "organizationId", "email", "updatedAt")
       SELECT gen_random_uuid(), $1::uuid, 'many' || i || '@count.example', now() FROM generate_series(1, 1001) AS i`,
      [tenant.org.id],
    );
    const url = `${porta.baseUrl}/console/organizations/${tenant.org.id}/users`;
    const text = async (query: string, language: string) => (await admin.browser.get(`${url}${query}`, { "accept-language": language })).text();
    const total = (html: string) => /<p class="list-total">([^<]*)<\/p>/.exec(html)?.[1];
    expect(total(await text("", "en"))).toBe("1,001 users");
    expect(total(await text("", "de"))).toBe("1.001 Benutzer");
    expect(total(await text("?q=count.example", "en"))).toBe("1,000+ users found");
    expect(total(await text("?q=count.example", "de"))).toBe("1.000+ Benutzer gefunden");
    expect(total(await text("?q=many471@", "en"))).toBe("1 user found");
    expect(total(await text("?q=many471@", "de"))).toBe("1 Benutzer gefunden");
  }, 60_000);
});

describe("editing a user", () => {
  it("saves the profile; a stale version shows the conflict view and changes nothing", async () => {
    const tenant = await createTenant(porta);
    const user = await createUser(prisma(), tenant.org.id, { email: "edit@people.example", givenName: "Ada", familyName: "Lovelace" });
    const url = `${porta.baseUrl}/console/organizations/${tenant.org.id}/users/${user.id}`;
    const { csrf, html } = await pageWithCsrf(admin.browser, url);
    expect(html).toContain("Edit profile");
    const version = versionOf(html);

    const saved = await admin.browser.post(url, { csrf, intent: "update", version, email: "grace@people.example", givenName: "Grace", familyName: "Hopper", locale: "en" });
    expect(saved.headers.get("location")).toBe(`/console/organizations/${tenant.org.id}/users/${user.id}?done=updated`);
    const page = await landing(saved);
    expect(page).toContain("The profile was saved.");
    expect(page).toContain("<h1>grace@people.example</h1>");
    expect(versionOf(page)).toBe(String(Number(version) + 1));
    const after = await prisma().user.findUniqueOrThrow({ where: { id: user.id } });
    expect(after).toMatchObject({ email: "grace@people.example", givenName: "Grace", familyName: "Hopper", locale: "en", emailVerified: false });

    const stale = await admin.browser.post(url, { csrf, intent: "update", version, email: "edit@people.example", givenName: "Stale", familyName: "", locale: "de" });
    expect(stale.status).toBe(409);
    const conflict = await stale.text();
    expect(conflict).toContain("Changed by someone else");
    expect(conflict).toContain("Someone else saved this user while you were editing.");
    expect(conflict).toContain("Grace");
    expect(conflict).toContain("Stale");
    expect(conflict).toContain("Reload the current version");
    expect(await prisma().user.findUniqueOrThrow({ where: { id: user.id } })).toEqual(after);
    // A form without its version is not a licence to overwrite either.
    const unversioned = await admin.browser.post(url, { csrf, intent: "update", email: "edit@people.example", givenName: "Blind", familyName: "", locale: "" });
    expect(unversioned.status).toBe(409);
    expect(await unversioned.text()).toContain("Changed by someone else");
    expect(await prisma().user.findUniqueOrThrow({ where: { id: user.id } })).toEqual(after);

    // Clearing a name sends null; bad input stays beside its field and writes nothing.
    const bad = await admin.browser.post(url, { csrf, intent: "update", version: versionOf(page), email: "broken", givenName: "", familyName: "", locale: "" });
    expect(bad.status).toBe(422);
    expect(await bad.text()).toMatch(/id="email-error"[^>]*>must be an email address</);
    expect(await prisma().user.findUniqueOrThrow({ where: { id: user.id } })).toEqual(after);
    const cleared = await admin.browser.post(url, { csrf, intent: "update", version: versionOf(page), email: "grace@people.example", givenName: "", familyName: "Hopper", locale: "" });
    expect(cleared.status).toBe(302);
    const final = await prisma().user.findUniqueOrThrow({ where: { id: user.id } });
    expect(final).toMatchObject({ givenName: null, familyName: "Hopper", locale: null });

    // Saving without a change writes nothing: no new version, no history entry.
    const updates = () => prisma().auditEntry.count({ where: { eventType: "user.updated", targetId: user.id } });
    const entries = await updates();
    const same = await admin.browser.post(url, { csrf, intent: "update", version: String(final.version), email: "grace@people.example", givenName: "", familyName: "Hopper", locale: "" });
    expect(await landing(same)).toContain("The profile was saved.");
    expect(await prisma().user.findUniqueOrThrow({ where: { id: user.id } })).toEqual(final);
    expect(await updates()).toBe(entries);
  });

  it("refuses an email address another user of the organization has", async () => {
    const tenant = await createTenant(porta);
    await createUser(prisma(), tenant.org.id, { email: "first@people.example" });
    const user = await createUser(prisma(), tenant.org.id, { email: "second@people.example" });
    const url = `${porta.baseUrl}/console/organizations/${tenant.org.id}/users/${user.id}`;
    const { csrf, html } = await pageWithCsrf(admin.browser, url);
    const res = await admin.browser.post(url, { csrf, intent: "update", version: versionOf(html), email: "first@people.example", givenName: "Ada", familyName: "Lovelace", locale: "" });
    expect(res.status).toBe(409);
    expect(await res.text()).toMatch(/id="email-error"[^>]*>A resource with this email already exists\./);
    expect((await prisma().user.findUniqueOrThrow({ where: { id: user.id } })).email).toBe("second@people.example");
  });
});

describe("a user's sessions, history and deletion", () => {
  it("revokes exactly the session chosen; the other one lives on", async () => {
    const tenant = await createTenant(porta);
    const otherClient = await tenantOf(porta, tenant.org);
    // Sessions name their client (decision 039): two names to tell the two apart.
    await prisma().client.update({ where: { id: tenant.clientId }, data: { name: "Web shop" } });
    await prisma().client.update({ where: { id: otherClient.clientId }, data: { name: "Mobile app" } });
    const user = await createUser(prisma(), tenant.org.id, { email: "twice@sessions.example", password: PASSWORD });
    const first = await signIn(tenant, { email: user.email, password: PASSWORD });
    const second = await signIn(otherClient, { email: user.email, password: PASSWORD });
    const sessions = async () => (await api.get<{ data: Array<{ id: string; clientId: string }> }>(`/sessions?userId=${user.id}`)).body.data;
    const before = await sessions();
    expect(before.map((s) => s.clientId).sort()).toEqual([tenant.clientId, otherClient.clientId].sort());

    const url = `${porta.baseUrl}/console/organizations/${tenant.org.id}/users/${user.id}`;
    const { csrf, html } = await pageWithCsrf(admin.browser, url);
    expect(html).toContain("<h2 id=\"sessions-title\">Sessions</h2>");
    expect(html).toContain("Revoke session of Web shop");
    expect(html).toContain("Revoke session of Mobile app");
    expect(html).toContain("Sign out everywhere");

    const target = before.find((s) => s.clientId === tenant.clientId)!;
    const res = await admin.browser.post(url, { csrf, intent: "revokeSession", sessionId: target.id });
    const page = await landing(res);
    expect(page).toContain("The session was revoked.");
    expect(page).not.toContain("Revoke session of Web shop");
    expect(page).toContain("Revoke session of Mobile app");
    expect((await sessions()).map((s) => s.clientId)).toEqual([otherClient.clientId]);
    expect(await userinfoStatus(tenant, first.accessToken)).toBe(401);
    expect(await userinfoStatus(otherClient, second.accessToken)).toBe(200);

    // A session already gone: the Admin API's message, nothing else changes.
    const again = await admin.browser.post(url, { csrf, intent: "revokeSession", sessionId: target.id });
    expect(again.status).toBe(404);
    expect(await again.text()).toContain('role="alert"');
    expect((await sessions()).map((s) => s.clientId)).toEqual([otherClient.clientId]);

    // Someone else's session cannot be revoked through this user's page.
    const stranger = await createUser(prisma(), tenant.org.id, { email: "stranger@sessions.example", password: PASSWORD });
    const theirs = await signIn(tenant, { email: stranger.email, password: PASSWORD });
    const [theirSession] = (await api.get<{ data: Array<{ id: string }> }>(`/sessions?userId=${stranger.id}`)).body.data;
    const foreign = await admin.browser.post(url, { csrf, intent: "revokeSession", sessionId: theirSession!.id });
    expect(foreign.status).toBe(404);
    expect(await foreign.text()).toContain("This user has no such session.");
    expect(await userinfoStatus(tenant, theirs.accessToken)).toBe(200);
  });

  it("lists the history newest first, with paging to older entries", async () => {
    const tenant = await createTenant(porta);
    const url = `${porta.baseUrl}/console/organizations/${tenant.org.id}/users`;
    const { csrf } = await pageWithCsrf(admin.browser, url);
    const created = await admin.browser.post(url, { csrf, intent: "create", newEmail: "history@people.example", newGivenName: "Hedy" });
    const user = await prisma().user.findFirstOrThrow({ where: { organizationId: tenant.org.id, email: "history@people.example" } });
    const userUrl = `${porta.baseUrl}/console/organizations/${tenant.org.id}/users/${user.id}`;
    let html = await landing(created);
    const updated = await admin.browser.post(userUrl, { csrf, intent: "update", version: versionOf(html), email: user.email, givenName: "Hedwig", familyName: "Kiesler", locale: "" });
    html = await landing(updated);
    const history = html.slice(html.indexOf('id="history-title"'));
    expect(history).toContain("<code>user.updated</code>");
    // Only what changed is recorded: the unchanged email address is not part of the update.
    // Each row: when, the event, who (the admin and their id), and what changed.
    // Who by name, linked to their page (the id on hover); the change as before → after (decision 039).
    expect(history).toMatch(
      /<code>user\.updated<\/code><\/td><td><span class="actor-kind">Admin<\/span> <a title="user [0-9a-f-]{36}" class="named"[^>]*>admin@porta\.test<\/a><\/td><td><span class="history-change">givenName: Hedy → Hedwig, familyName: — → Kiesler<\/span><\/td>/,
    );
    expect(history).toContain("<code>user.created</code>");
    expect(history.indexOf("user.updated")).toBeLessThan(history.indexOf("user.created"));
    expect(history).not.toContain('rel="next"');

    // 21 more changes: the first page holds the newest 20, the next one the older ones.
    for (let i = 0; i < 21; i++) expect((await api.put(`/users/${user.id}`, { givenName: `Name ${i}` })).status).toBe(200);
    const firstPage = await (await admin.browser.get(userUrl)).text();
    const firstHistory = firstPage.slice(firstPage.indexOf('id="history-title"'));
    expect(firstHistory).toContain("givenName: Name 19 → Name 20");
    expect(firstHistory).not.toContain("<code>user.created</code>");
    const olderLink = /<a [^>]*rel="next"[^>]*>/.exec(firstHistory)![0];
    const next = /href="([^"]+)"/.exec(olderLink)![1]!.replaceAll("&amp;", "&");
    const older = await (await admin.browser.get(new URL(next, userUrl).href)).text();
    const olderHistory = older.slice(older.indexOf('id="history-title"'));
    expect(olderHistory).toContain("<code>user.created</code>");
    expect(olderHistory).not.toContain("→ Name 20");
    expect(olderHistory).toContain("Newest entries");
  });

  it("deletes a user after a confirmation and goes back to the list with a notice", async () => {
    const tenant = await createTenant(porta);
    const user = await createUser(prisma(), tenant.org.id, { email: "leaving@people.example" });
    const url = `${porta.baseUrl}/console/organizations/${tenant.org.id}/users/${user.id}`;
    const { csrf, html } = await pageWithCsrf(admin.browser, url);
    expect(html).toContain("Delete leaving@people.example for good? This cannot be undone.");
    const res = await admin.browser.post(url, { csrf, intent: "delete" });
    expect(res.headers.get("location")).toBe(`/console/organizations/${tenant.org.id}/users?done=deleted`);
    const page = await landing(res);
    expect(page).toContain("The user was deleted.");
    expect(page).not.toContain("leaving@people.example");
    expect(await prisma().user.findUnique({ where: { id: user.id } })).toBeNull();
    expect(await prisma().auditEntry.findFirst({ where: { eventType: "user.deleted", targetId: user.id } })).not.toBeNull();
  });
});

describe("roles and permissions", () => {
  async function roleSetup() {
    const tenant = await createTenant(porta);
    const read = await prisma().permission.create({ data: { organizationId: tenant.org.id, name: "orders:read" } });
    const write = await prisma().permission.create({ data: { organizationId: tenant.org.id, name: "orders:write" } });
    const role = await prisma().role.create({ data: { organizationId: tenant.org.id, name: "buyer", description: "Buys things" } });
    const user = await createUser(prisma(), tenant.org.id);
    await prisma().userRole.create({ data: { userId: user.id, roleId: role.id } });
    return { tenant, read, write, role, user, url: `${porta.baseUrl}/console/organizations/${tenant.org.id}/roles/${role.id}` };
  }

  it("links the role page from the list; renames the role, a stale version shows the conflict view", async () => {
    const { tenant, role, url } = await roleSetup();
    const list = await (await admin.browser.get(`${porta.baseUrl}/console/organizations/${tenant.org.id}/roles`)).text();
    expect(list).toContain(`href="/console/organizations/${tenant.org.id}/roles/${role.id}"`);
    const { csrf, html } = await pageWithCsrf(admin.browser, url);
    expect(html).toContain("<h1>Role buyer</h1>");
    const version = versionOf(html);

    const saved = await admin.browser.post(url, { csrf, intent: "update", version, name: "purchaser", description: "" });
    expect(saved.headers.get("location")).toBe(`/console/organizations/${tenant.org.id}/roles/${role.id}?done=updated`);
    const page = await landing(saved);
    expect(page).toContain("The role was saved.");
    expect(page).toContain("<h1>Role purchaser</h1>");
    const after = await prisma().role.findUniqueOrThrow({ where: { id: role.id } });
    expect(after).toMatchObject({ name: "purchaser", description: null });

    const stale = await admin.browser.post(url, { csrf, intent: "update", version, name: "seller", description: "Sells" });
    expect(stale.status).toBe(409);
    const conflict = await stale.text();
    expect(conflict).toContain("Changed by someone else");
    expect(conflict).toContain("purchaser");
    expect(conflict).toContain("seller");
    expect(await prisma().role.findUniqueOrThrow({ where: { id: role.id } })).toEqual(after);

    const bad = await admin.browser.post(url, { csrf, intent: "update", version: versionOf(page), name: "no/slashes allowed", description: "" });
    expect(bad.status).toBe(422);
    expect(await bad.text()).toMatch(/id="name-error"/);
    expect(await prisma().role.findUniqueOrThrow({ where: { id: role.id } })).toEqual(after);

    // A role of another organization is not found under this one.
    const elsewhere = await createTenant(porta);
    expect((await admin.browser.get(`${porta.baseUrl}/console/organizations/${elsewhere.org.id}/roles/${role.id}`)).status).toBe(404);
  });

  it("assigns and removes permissions, which changes a holder's effective permissions", async () => {
    const { read, write, role, user, url } = await roleSetup();
    expect(await effectiveOf(user.id)).toEqual([]);
    const { csrf, html } = await pageWithCsrf(admin.browser, url);
    expect(html).toContain("This role grants no permissions yet.");
    expect(html).toContain("Permission to assign");

    const assigned = await admin.browser.post(url, { csrf, intent: "assignPermission", permissionId: read.id });
    const page = await landing(assigned);
    expect(page).toContain("The permission was assigned.");
    expect(page).toContain("Remove orders:read");
    expect(page).toContain("Take orders:read from the role buyer? Everyone holding the role loses it.");
    expect(await effectiveOf(user.id)).toEqual(["orders:read"]);
    await landing(await admin.browser.post(url, { csrf, intent: "assignPermission", permissionId: write.id }));
    expect((await effectiveOf(user.id)).sort()).toEqual(["orders:read", "orders:write"]);

    const removed = await admin.browser.post(url, { csrf, intent: "removePermission", permissionId: read.id });
    const afterRemove = await landing(removed);
    expect(afterRemove).toContain("The permission was removed.");
    expect(afterRemove).not.toContain("Remove orders:read");
    expect(await effectiveOf(user.id)).toEqual(["orders:write"]);
    expect(await prisma().rolePermission.count({ where: { roleId: role.id } })).toBe(1);

    // A permission id that is not one: the Admin API's message, nothing changes.
    const bogus = await admin.browser.post(url, { csrf, intent: "assignPermission", permissionId: "nope" });
    expect(bogus.status).toBe(422);
    expect(await bogus.text()).toContain("must be a UUID");
    expect(await effectiveOf(user.id)).toEqual(["orders:write"]);
  });

  it("deletes a permission after a confirmation; the Admin API's refusal is shown", async () => {
    const { tenant, read, role, user } = await roleSetup();
    await prisma().rolePermission.create({ data: { roleId: role.id, permissionId: read.id } });
    const url = `${porta.baseUrl}/console/organizations/${tenant.org.id}/roles`;
    const { csrf, html } = await pageWithCsrf(admin.browser, url);
    expect(html).toContain("Delete orders:read");
    expect(html).toContain("Delete the permission orders:read? Every role that holds it loses it.");
    const res = await admin.browser.post(url, { csrf, intent: "deletePermission", permissionId: read.id });
    const page = await landing(res);
    expect(page).toContain("The permission was deleted.");
    expect(page).not.toContain("Delete orders:read");
    expect(await prisma().permission.findUnique({ where: { id: read.id } })).toBeNull();
    expect(await effectiveOf(user.id)).toEqual([]);

    // The super-admin organization's own permissions are refused by the Admin API.
    const superOrg = await prisma().organization.findUniqueOrThrow({ where: { slug: porta.services.config.superAdminSlug } });
    const own = await prisma().permission.findFirstOrThrow({ where: { organizationId: superOrg.id, name: "admin:user:read" } });
    const superUrl = `${porta.baseUrl}/console/organizations/${superOrg.id}/roles`;
    const refused = await admin.browser.post(superUrl, { csrf, intent: "deletePermission", permissionId: own.id });
    expect(refused.status).toBe(409);
    expect(await refused.text()).toMatch(/role="alert">The Admin API&#x27;s own permissions cannot be deleted\.</);
    expect(await prisma().permission.findUnique({ where: { id: own.id } })).not.toBeNull();

    // A permission of another organization cannot be deleted through this one's page.
    const elsewhere = await prisma().permission.create({ data: { organizationId: superOrg.id, name: unique("other") } });
    expect((await admin.browser.post(url, { csrf, intent: "deletePermission", permissionId: elsewhere.id })).status).toBe(404);
    expect(await prisma().permission.findUnique({ where: { id: elsewhere.id } })).not.toBeNull();
  });
});

describe("CSRF", () => {
  it("refuses every new form without the session's CSRF token and writes nothing", async () => {
    const tenant = await createTenant(porta);
    const user = await createUser(prisma(), tenant.org.id, { email: "csrf@people.example" });
    const permission = await prisma().permission.create({ data: { organizationId: tenant.org.id, name: "csrf:perm" } });
    const role = await prisma().role.create({ data: { organizationId: tenant.org.id, name: "csrf-role" } });
    const base = `${porta.baseUrl}/console/organizations/${tenant.org.id}`;
    const snapshot = async () => ({
      users: await prisma().user.findMany({ where: { organizationId: tenant.org.id }, orderBy: { id: "asc" } }),
      roles: await prisma().role.findMany({ where: { organizationId: tenant.org.id }, include: { permissions: true } }),
      permissions: await prisma().permission.findMany({ where: { organizationId: tenant.org.id } }),
    });
    const before = await snapshot();
    const posts: Array<[string, Record<string, string>]> = [
      [`${base}/users`, { intent: "create", newEmail: "forged@people.example" }],
      [`${base}/users/${user.id}`, { intent: "update", version: "1", email: "forged@people.example" }],
      [`${base}/users/${user.id}`, { intent: "revokeSession", sessionId: "0123456789abcdef" }],
      [`${base}/users/${user.id}`, { intent: "delete" }],
      [`${base}/roles/${role.id}`, { intent: "update", version: "1", name: "forged" }],
      [`${base}/roles/${role.id}`, { intent: "assignPermission", permissionId: permission.id }],
      [`${base}/roles/${role.id}`, { intent: "removePermission", permissionId: permission.id }],
      [`${base}/roles`, { intent: "deletePermission", permissionId: permission.id }],
    ];
    for (const [url, form] of posts) {
      for (const csrf of [undefined, "forged"]) {
        const res = await admin.browser.post(url, csrf ? { ...form, csrf } : form);
        expect(res.status, `${form.intent} with csrf ${csrf}`).toBe(403);
      }
    }
    expect(await snapshot()).toEqual(before);
  });
});
