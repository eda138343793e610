import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { adminApi, obtainAdminTokens } from "../support/admin-api";
import { startAuthorization } from "../support/browser";
import { createOrganization, createUser } from "../support/factories";
import { startTestPorta, type TestPorta } from "../support/porta";
import { createTenant, PASSWORD, RP_CALLBACK, unique } from "../admin/helpers";
import { withoutPermission } from "../admin/resources";
import { consoleSignIn, cookieNamed, createServiceAdmin, pageWithCsrf, uploadLogo, type ConsoleVisit } from "./helpers";

/**
 * The console's overview parts as a person meets them: logins over time on the dashboard and an
 * organization's page, entity history with paging, the audit log's day filters, the status
 * filter, the language switch, areas hidden without their permission, a revoked session sending
 * the person to sign in again, and removing a branding image.
 */
let porta: TestPorta;
let admin: ConsoleVisit;
const OTHER = { email: "overview-admin@porta.test", password: PASSWORD };
let other: ConsoleVisit;
let otherId: string;

beforeAll(async () => {
  porta = await startTestPorta();
  otherId = (await createServiceAdmin(porta, OTHER)).id;
  admin = await consoleSignIn(porta);
  other = await consoleSignIn(porta, OTHER);
});
afterAll(async () => {
  await porta?.stop();
});

const utcDay = (daysBack: number, hour = 12) => {
  const now = new Date();
  return new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate() - daysBack, hour));
};
const dateOf = (d: Date) => d.toISOString().slice(0, 10);

/** The figures row of one day in a daily chart's table: [password, magic link, passkey, federated, total]. */
function dayRow(html: string, date: string): number[] {
  const match = new RegExp(`<time datetime="${date}">[^<]*</time></th><td>(\\d+)</td><td>(\\d+)</td><td>(\\d+)</td><td>(\\d+)</td><td>(\\d+)</td>`, "i").exec(html);
  expect(match, `a row for ${date}`).not.toBeNull();
  return match!.slice(1).map(Number);
}

async function recordLogin(organizationId: string, method: string, at: Date) {
  await porta.services.db.prisma.auditEntry.create({ data: { eventType: "auth.login.success", organizationId, actorType: "user", createdAt: at, data: { method } } });
}

describe("logins over time", () => {
  it("draws the last 14 days on the dashboard, each day's figures in a table", async () => {
    const tenant = await createTenant(porta);
    const day = dateOf(utcDay(3));
    const before = dayRow(await (await admin.browser.get(`${porta.baseUrl}/console`)).text(), day);
    await recordLogin(tenant.org.id, "magic_link", utcDay(3, 9));
    await recordLogin(tenant.org.id, "magic_link", utcDay(3, 15));
    await recordLogin(tenant.org.id, "password", utcDay(3, 20));
    await recordLogin(tenant.org.id, "passkey", utcDay(3, 11));
    await recordLogin(tenant.org.id, "federated", utcDay(3, 12));
    // A failed login is no login, and 20 days ago is outside the dashboard's two weeks.
    await porta.services.db.prisma.auditEntry.create({ data: { eventType: "auth.login.failure", organizationId: tenant.org.id, actorType: "user", createdAt: utcDay(3), data: { method: "password" } } });
    await recordLogin(tenant.org.id, "password", utcDay(20));

    const html = await (await admin.browser.get(`${porta.baseUrl}/console`)).text();
    expect(html).toContain("Logins per day, last 14 days (UTC)");
    expect(dayRow(html, day)).toEqual([before[0]! + 1, before[1]! + 2, before[2]! + 1, before[3]! + 1, before[4]! + 5]);
    expect(html).not.toMatch(new RegExp(`<time datetime="${dateOf(utcDay(20))}"`, "i"));
    expect(html).toMatch(new RegExp(`<time datetime="${dateOf(utcDay(0))}"`, "i"));
    // The drawing is decoration; the figures are the table.
    expect(html).toMatch(/<svg[^>]*aria-hidden="true"[^>]*class="daily-chart-drawing"/);
  });

  it("shows an organization's own figures over 30 days and its history, paged", async () => {
    const tenant = await createTenant(porta);
    const elsewhere = await createTenant(porta);
    await recordLogin(tenant.org.id, "password", utcDay(25));
    await recordLogin(tenant.org.id, "magic_link", utcDay(0, 0));
    await recordLogin(elsewhere.org.id, "magic_link", utcDay(25));
    const prisma = porta.services.db.prisma;
    for (let i = 1; i <= 12; i++) {
      await prisma.auditEntry.create({ data: { eventType: "organization.updated", organizationId: tenant.org.id, actorType: "admin", targetType: "organization", targetId: tenant.org.id, data: { step: i } } });
    }
    const url = `${porta.baseUrl}/console/organizations/${tenant.org.id}`;
    const html = await (await admin.browser.get(url)).text();
    expect(html).toContain("Logins per day, last 30 days (UTC)");
    expect(dayRow(html, dateOf(utcDay(25)))).toEqual([1, 0, 0, 0, 1]);
    expect(dayRow(html, dateOf(utcDay(0)))).toEqual([0, 1, 0, 0, 1]);
    expect(html).toContain("Logins: 1 in the last 24 hours, 1 in 7 days, 2 in 30 days.");

    // Ten newest entries first, then the rest through the history cursor.
    const history = (page: string) => page.slice(page.indexOf('id="history-title"'));
    expect(history(html).match(/<code>organization\.updated<\/code>/g)).toHaveLength(10);
    const older = /<a [^>]*href="([^"]*historyAfter=[^"]+)"[^>]*>Older entries<\/a>/.exec(history(html));
    expect(older).not.toBeNull();
    const second = history(await (await admin.browser.get(new URL(older![1]!.replaceAll("&amp;", "&"), url).toString())).text());
    expect(second.match(/<code>organization\.updated<\/code>/g)).toHaveLength(2);
    expect(second).toContain("Newest entries");
    expect(second).not.toContain("Older entries");
    expect(second).toContain(`href="/console/audit?targetId=${tenant.org.id}"`);
  });
});

describe("audit log filters", () => {
  it("narrows to whole UTC days, links targets to their pages, and puts a bad date next to its field", async () => {
    const tenant = await createTenant(porta);
    const target = (await createUser(porta.services.db.prisma, tenant.org.id, { email: `${unique("a")}@example.com` })).id;
    const entry = (daysBack: number, eventType: string) =>
      porta.services.db.prisma.auditEntry.create({ data: { eventType, organizationId: tenant.org.id, actorType: "admin", targetType: "user", targetId: target, createdAt: utcDay(daysBack, 23) } });
    await entry(5, "user.updated");
    await entry(1, "user.deactivated");
    const audit = (query: Record<string, string>) => admin.browser.get(`${porta.baseUrl}/console/audit?${new URLSearchParams({ targetId: target, ...query })}`);

    const recent = await (await audit({ from: dateOf(utcDay(2)) })).text();
    expect(recent).toContain("<code>user.deactivated</code>");
    expect(recent).not.toContain("<code>user.updated</code>");
    // "to" includes its whole day: the entry at 23:00 of that day is in.
    const early = await (await audit({ to: dateOf(utcDay(5)) })).text();
    expect(early).toContain("<code>user.updated</code>");
    expect(early).not.toContain("<code>user.deactivated</code>");
    expect(early).toContain(`href="/console/organizations/${tenant.org.id}/users/${target}"`);
    const both = await (await audit({ from: dateOf(utcDay(6)), to: dateOf(utcDay(0)) })).text();
    expect(both).toContain("<code>user.updated</code>");
    expect(both).toContain("<code>user.deactivated</code>");

    const reversed = await audit({ from: dateOf(utcDay(1)), to: dateOf(utcDay(5)) });
    expect(reversed.status).toBe(422);
    expect(await reversed.text()).toMatch(/id="to-error"[^>]*>must not be before the start date/);
    const garbled = await audit({ from: "2026-13-45" });
    expect(garbled.status).toBe(422);
    expect(await garbled.text()).toMatch(/id="from-error"[^>]*>must be a date/);
    // An organization id comes from a link, not a field (decision 039: the field takes a name): a
    // bad one is said at the top of the page.
    const badOrg = await audit({ organizationId: "not-a-uuid" });
    expect(badOrg.status).toBe(422);
    expect(await badOrg.text()).toMatch(/role="alert">organizationId: [^<]+<\/div>/);
  });
});

describe("organizations list", () => {
  it("filters by status", async () => {
    const name = unique("Status Filter");
    await createOrganization(porta.services.db.prisma, { name, status: "suspended" });
    const list = (status: string) => admin.browser.get(`${porta.baseUrl}/console/organizations?${new URLSearchParams({ q: name, status })}`).then((r) => r.text());
    expect(await list("suspended")).toContain(`>${name}</a>`);
    expect(await list("active")).not.toContain(`>${name}</a>`);
    expect(await list("")).toContain(`>${name}</a>`);
    // An unknown status is no filter rather than an error page.
    expect(await list("bogus")).toContain(`>${name}</a>`);
  });
});

describe("language", () => {
  it("switches the console to German and back, only with the session's CSRF token, only to a console page", async () => {
    const { csrf, html } = await pageWithCsrf(other.browser, `${porta.baseUrl}/console/audit`);
    expect(html).toContain('<html lang="en"');
    expect(html).toContain(">Deutsch</button>");

    const refused = await other.browser.post(`${porta.baseUrl}/console/language`, { csrf: "forged", language: "de", returnTo: "/console/audit" });
    expect(refused.status).toBe(403);
    expect(cookieNamed(refused.headers.getSetCookie(), "porta_console_lang")).toBeUndefined();

    const switched = await other.browser.post(`${porta.baseUrl}/console/language`, { csrf, language: "de", returnTo: "/console/audit?eventType=user.updated" });
    expect(switched.status).toBe(302);
    expect(switched.headers.get("location")).toBe("/console/audit?eventType=user.updated");
    expect(cookieNamed(switched.headers.getSetCookie(), "porta_console_lang")).toMatch(/^porta_console_lang=de; Path=\/; Max-Age=31536000; HttpOnly; SameSite=Lax$/);
    const german = await (await other.browser.get(`${porta.baseUrl}/console/audit`)).text();
    expect(german).toContain('<html lang="de"');
    expect(german).toContain("Audit-Protokoll");
    expect(german).toContain(">English</button>");

    // Elsewhere than the console, and an unknown language, change nothing.
    const away = await other.browser.post(`${porta.baseUrl}/console/language`, { csrf, language: "en", returnTo: "https://evil.example/console" });
    expect(away.headers.get("location")).toBe("/console");
    const unknown = await other.browser.post(`${porta.baseUrl}/console/language`, { csrf, language: "xx", returnTo: "/console" });
    expect(cookieNamed(unknown.headers.getSetCookie(), "porta_console_lang")).toBeUndefined();
    expect(await (await other.browser.get(`${porta.baseUrl}/console`)).text()).toContain('<html lang="en"');
  });
});

describe("permissions", () => {
  it("hides an area without its permission and explains the refusal on its page", async () => {
    const nav = (html: string) => html.slice(html.indexOf('aria-label="Console"'), html.indexOf("</nav>", html.indexOf('aria-label="Console"')));
    expect(nav(await (await admin.browser.get(`${porta.baseUrl}/console`)).text())).toContain(">Audit log</a>");
    await withoutPermission(porta, "admin:audit:read", async () => {
      const html = await (await admin.browser.get(`${porta.baseUrl}/console`)).text();
      expect(nav(html)).not.toContain("Audit log");
      expect(nav(html)).toContain(">Organizations</a>");
      const page = await admin.browser.get(`${porta.baseUrl}/console/audit`);
      expect(page.status).toBe(403);
      expect(await page.text()).toContain("This operation needs the permission admin:audit:read.");
    });
    await withoutPermission(porta, "admin:org:read", async () => {
      const page = await admin.browser.get(`${porta.baseUrl}/console/organizations/${porta.bootstrap.organizationId}`);
      expect(page.status).toBe(403);
      expect(await page.text()).toContain("Your account does not have the permission this page needs.");
    });
  });

  it("sends a person whose tokens were revoked elsewhere to sign in again", async () => {
    const visit = await consoleSignIn(porta, OTHER);
    expect((await visit.browser.get(`${porta.baseUrl}/console/audit`)).status).toBe(200);
    const api = adminApi(porta, (await obtainAdminTokens(porta)).accessToken);
    expect((await api.delete(`/users/${otherId}/sessions`)).status).toBe(204);
    const page = await visit.browser.get(`${porta.baseUrl}/console/audit?eventType=user.updated`);
    expect(page.status).toBe(302);
    const location = new URL(page.headers.get("location")!);
    expect(location.pathname).toBe(`/${porta.services.config.superAdminSlug}/auth/authorize`);
    expect(location.searchParams.get("client_id")).toBe("porta-admin");
    other = await consoleSignIn(porta, OTHER);
  });
});

describe("branding images", () => {
  it("removes the logo after a confirmation, and the login page shows the name again", async () => {
    const tenant = await createTenant(porta);
    const url = `${porta.baseUrl}/console/organizations/${tenant.org.id}/branding`;
    const { csrf } = await pageWithCsrf(admin.browser, url);
    expect((await uploadLogo(admin, url, csrf)).status).toBe(302);

    const loginHtml = async () => {
      const login = await startAuthorization({ issuer: tenant.issuer, clientId: tenant.clientId, clientSecret: tenant.secret, redirectUri: RP_CALLBACK });
      return (await login.browser.get(login.interactionUrl)).text();
    };
    expect(await loginHtml()).toContain('class="brand-logo"');

    const html = await (await admin.browser.get(url)).text();
    expect(html).toContain("Current images");
    expect(html).toContain("Remove the Logo? The login pages show the organization");
    const version = /name="kind" value="logo"\/><input type="hidden" name="version" value="(\d+)"/.exec(html)?.[1];
    expect(version).toBeDefined();

    const unknown = await admin.browser.post(url, { csrf, intent: "removeAsset", kind: "banner", version: version! });
    expect(unknown.status).toBe(422);
    expect(await unknown.text()).toContain("This kind of image does not exist.");
    const stale = await admin.browser.post(url, { csrf, intent: "removeAsset", kind: "logo", version: String(Number(version) - 1) });
    expect(stale.status).toBe(409);
    expect(await loginHtml()).toContain('class="brand-logo"');

    const removed = await admin.browser.post(url, { csrf, intent: "removeAsset", kind: "logo", version: version! });
    expect(removed.headers.get("location")).toBe(`/console/organizations/${tenant.org.id}/branding?done=removed`);
    expect(await (await admin.browser.get(`${url}?done=removed`)).text()).toContain("The image was removed.");
    const after = await loginHtml();
    expect(after).not.toContain('class="brand-logo"');
    expect(after).toContain(`Organization ${tenant.org.slug}`);
  });
});
