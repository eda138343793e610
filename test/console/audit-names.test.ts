import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { adminApi, obtainAdminTokens } from "../support/admin-api";
import { createUser } from "../support/factories";
import { TEST_ADMIN, startTestPorta, type TestPorta } from "../support/porta";
import { createTenant, PASSWORD, signIn, unique, type Tenant } from "../admin/helpers";
import { openLoginPage, submitPassword } from "../login/helpers";
import { createTenant as createLoginTenant } from "../login/helpers";
import { consoleSignIn, type ConsoleVisit } from "./helpers";

/**
 * The console's audit log, entry page, histories and sessions by name (decision
 * 039), as a browser without JavaScript gets them: names with links and the ids on hover, the
 * filters as a plain GET form resolved on the server, the change as a diff.
 */
let porta: TestPorta;
let admin: ConsoleVisit;
let api: ReturnType<typeof adminApi>;
let tenant: Tenant;
beforeAll(async () => {
  porta = await startTestPorta();
  admin = await consoleSignIn(porta);
  api = adminApi(porta, (await obtainAdminTokens(porta)).accessToken);
  tenant = await createTenant(porta);
});
afterAll(async () => {
  await porta?.stop();
});

const get = async (path: string) => {
  const res = await admin.browser.get(`${porta.baseUrl}${path}`);
  return { status: res.status, html: await res.text() };
};
const escaped = (text: string) => text.replace(/&/g, "&amp;").replace(/"/g, "&quot;");

describe("the audit log by name", () => {
  it("filters by a target's name without JavaScript and shows who did what to whom by name, linked, the ids on hover", async () => {
    const name = `Storefront ${unique("c")}`;
    expect((await api.put(`/clients/${tenant.clientId}`, { name })).status).toBe(200);
    const { status, html } = await get(`/console/audit?target=${encodeURIComponent(name.toUpperCase())}`);
    expect(status).toBe(200);
    const link = new RegExp(`<a [^>]*href="/console/organizations/${tenant.org.id}/clients/${tenant.clientId}"[^>]*>${name}</a>`).exec(html)?.[0];
    expect(link).toContain(`title="client ${tenant.clientId}"`);
    expect(html).toContain(`>${TEST_ADMIN.email}</a>`);
    expect(html).toContain(`>Organization ${tenant.org.slug}</a>`);
    expect(html).toContain("client.updated");
    const entry = await porta.services.db.prisma.auditEntry.findFirstOrThrow({ where: { targetId: tenant.clientId, eventType: "client.updated" }, orderBy: { id: "desc" } });
    expect(html).toContain(`href="/console/audit/${entry.id}"`);
    // The form keeps what was typed.
    expect(html).toContain(`value="${escaped(name.toUpperCase())}"`);
  });

  it("says in the page's words when a name matches nothing, and offers what the text is part of", async () => {
    const email = `${unique("findme")}@example.com`;
    await createUser(porta.services.db.prisma, tenant.org.id, { email });
    const part = email.slice(0, 12);
    const { status, html } = await get(`/console/audit?actor=${encodeURIComponent(part)}`);
    expect(status).toBe(422);
    expect(html).toContain(`No user or client is named “${part}”`);
    expect(html).toContain(`href="/console/audit?actor=${encodeURIComponent(email)}">${email}</a>`);
  });

  it("opens an entry on its own page with the change field by field, before and after, and its ids", async () => {
    const user = await createUser(porta.services.db.prisma, tenant.org.id, { givenName: "Grace" });
    expect((await api.put(`/users/${user.id}`, { givenName: "Ada", locale: "de" })).status).toBe(200);
    const entry = await porta.services.db.prisma.auditEntry.findFirstOrThrow({ where: { targetId: user.id, eventType: "user.updated" } });
    const { status, html } = await get(`/console/audit/${entry.id}`);
    expect(status).toBe(200);
    expect(html).toMatch(/<th scope="row">givenName<\/th><td><del>Grace<\/del><\/td><td><ins>Ada<\/ins><\/td>/);
    expect(html).toMatch(/<th scope="row">locale<\/th><td><del>—<\/del><\/td><td><ins>de<\/ins><\/td>/);
    expect(html).not.toMatch(/<th scope="row">(email|familyName|status)<\/th>/);
    expect(html).toContain(`>${user.email}</a>`);
    expect(html).toContain(`<code>${entry.id}</code>`);
    expect((await get("/console/audit/0190a000-0000-7000-8000-00000000beef")).status).toBe(404);
    expect((await get("/console/audit/not-an-entry")).status).toBe(404);
  });
});

describe("attribution and sessions", () => {
  it("shows a failed sign-in on the targeted user's page, with its reason", async () => {
    const login = await createLoginTenant(porta, { defaultLoginMethods: ["password"] });
    const user = await createUser(porta.services.db.prisma, login.org.id, { password: PASSWORD });
    const page = await openLoginPage(login);
    const res = await submitPassword(page, user.email, "not the password 123");
    expect(res.status).toBe(401);
    const stranger = `${unique("stranger")}@example.com`;
    expect((await submitPassword(await openLoginPage(login), stranger, "not the password 123")).status).toBe(401);
    const { html } = await get(`/console/organizations/${login.org.id}/users/${user.id}`);
    expect(html).toContain("auth.login.failure");
    expect(html).toContain("reason: wrong_password");
    // In the audit log: the account by name and link; an address no account has, as typed.
    const log = await get(`/console/audit?organization=${login.org.slug}&eventType=auth.login.failure`);
    expect(log.status).toBe(200);
    expect(log.html).toMatch(new RegExp(`<a [^>]*href="/console/organizations/${login.org.id}/users/${user.id}"[^>]*>${user.email}</a>`));
    expect(log.html).toContain(`<td>${stranger}</td>`);
  });

  it("lists sessions with the user's email, the client's name, IP address, browser, start and last activity", async () => {
    const user = await createUser(porta.services.db.prisma, tenant.org.id, { password: PASSWORD });
    await signIn(tenant, { email: user.email, password: PASSWORD });
    const client = await porta.services.db.prisma.client.findUniqueOrThrow({ where: { id: tenant.clientId } });
    // The sessions page finds them by email, without JavaScript; a name nobody has is said next to its field.
    const nobody = await get("/console/sessions?user=nobody%40nowhere.example");
    expect(nobody.status).toBe(422);
    expect(nobody.html).toMatch(/id="user-error"[^>]*>No user has the address “nobody@nowhere.example”\./);
    for (const path of [`/console/sessions?user=${encodeURIComponent(user.email)}`, `/console/organizations/${tenant.org.id}/users/${user.id}`]) {
      const { html } = await get(path);
      if (path.startsWith("/console/sessions")) expect(html).toContain(`href="/console/organizations/${tenant.org.id}/users/${user.id}"`);
      expect(html).toContain(`>${client.name}</a>`);
      expect(html).toContain("<td>127.0.0.1</td>");
      expect(html).toContain('title="node">node</span>');
      expect(html).toContain("Last activity");
    }
  });
});
