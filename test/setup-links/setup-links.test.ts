import type { AppLoadContext } from "@remix-run/node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { callAdmin } from "~/.server/console/gateway";
import { setupLinkCaller } from "~/.server/admin/http/setup-link-caller";
import { sha256 } from "~/.server/setup-links/service";
import { createTenant, type ErrorBody, type Tenant } from "../admin/helpers";
import { adminApi, obtainAdminTokens } from "../support/admin-api";
import { TestBrowser, csrfOf } from "../support/browser";
import { fakeDns } from "../support/domains";
import { startTestPorta, type TestPorta } from "../support/porta";
import { makeKeyPair } from "../support/saml-idp";
import { issueScimToken, patch, scimClient, USER_SCHEMA } from "../scim/support";
import { runPorta } from "../cli/helpers";

/**
 * Setup links (decision 089): a service admin creates a time-limited link; the customer's IT
 * person opens it once, in one browser, and configures the organization's SSO connections,
 * domains and SCIM tokens only — every change an Admin API operation audited as the link.
 */
let porta: TestPorta;
let api: ReturnType<typeof adminApi>;
let accessToken: string;
let tenant: Tenant;
let other: Tenant;
const dns = fakeDns();
const idp = makeKeyPair();

beforeAll(async () => {
  porta = await startTestPorta({ dnsResolver: dns });
  accessToken = (await obtainAdminTokens(porta)).accessToken;
  api = adminApi(porta, accessToken);
  tenant = await createTenant(porta);
  other = await createTenant(porta);
});
afterAll(async () => {
  await porta?.stop();
});

interface LinkView {
  id: string;
  organizationId: string;
  note: string | null;
  status: string;
  expiresAt: string;
  openedAt: string | null;
  url?: string;
}

const prisma = () => porta.services.db.prisma;
const tokenOf = (url: string) => new URL(url).searchParams.get("token")!;
const setupUrl = (slug: string) => `${porta.baseUrl}/${slug}/setup`;

async function createLink(orgId: string, body: Record<string, unknown> = {}) {
  const res = await api.post<LinkView>(`/organizations/${orgId}/setup-links`, body);
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body as LinkView & { url: string };
}

/** A browser that opened the link: bound, on the setup page. */
async function openIn(browser: TestBrowser, url: string) {
  const opened = await browser.get(url);
  expect(opened.status).toBe(303);
  const page = await browser.get(new URL(opened.headers.get("location")!, url).href);
  expect(page.status).toBe(200);
  return page.text();
}

describe("setup links in the Admin API", () => {
  it("creates a link whose URL is shown once, lists it by status without it, and revokes it, each audited", async () => {
    const created = await createLink(tenant.org.id, { note: "Jane, Acme IT", expiresInDays: 3 });
    expect(created.url).toMatch(new RegExp(`^${porta.baseUrl}/${tenant.org.slug}/setup\\?token=[A-Za-z0-9_-]{43}$`));
    expect(created).toMatchObject({ organizationId: tenant.org.id, note: "Jane, Acme IT", status: "pending", openedAt: null });
    expect(Date.parse(created.expiresAt) - Date.now()).toBeGreaterThan(2.9 * 86_400_000);
    expect(Date.parse(created.expiresAt) - Date.now()).toBeLessThan(3.1 * 86_400_000);
    const token = tokenOf(created.url);
    const row = await prisma().setupLink.findUniqueOrThrow({ where: { id: created.id } });
    expect(row.tokenHash).toBe(sha256(token));
    expect(JSON.stringify(row)).not.toContain(token);

    const list = await api.get<{ data: LinkView[] }>(`/organizations/${tenant.org.id}/setup-links`);
    expect(list.status).toBe(200);
    expect(JSON.stringify(list.body)).not.toContain(token);
    expect(list.body.data.find((l) => l.id === created.id)).toMatchObject({ status: "pending", note: "Jane, Acme IT" });
    expect(list.body.data.every((l) => l.url === undefined)).toBe(true);

    const revoked = await api.delete<LinkView>(`/setup-links/${created.id}`);
    expect(revoked.status).toBe(200);
    expect(revoked.body.status).toBe("revoked");
    const events = await prisma().auditEntry.findMany({ where: { targetId: created.id }, orderBy: { createdAt: "asc" } });
    expect(events.map((e) => [e.eventType, e.actorType])).toEqual([["setup_link.created", "admin"], ["setup_link.revoked", "admin"]]);
    expect(JSON.stringify(events)).not.toContain(token);
  });

  it("refuses bad input with 422 and field details, unknown links with 404, and the super-admin organization with 409", async () => {
    for (const [body, field] of [
      [{ expiresInDays: 31 }, "expiresInDays"],
      [{ expiresInDays: 0 }, "expiresInDays"],
      [{ expiresInDays: 1.5 }, "expiresInDays"],
      [{ note: "x".repeat(201) }, "note"],
      [{ url: "https://evil.test" }, "url"],
    ] as const) {
      const res = await api.post<ErrorBody>(`/organizations/${tenant.org.id}/setup-links`, body);
      expect(res.status, JSON.stringify(body)).toBe(422);
      expect(res.body.error.details?.map((d) => d.field)).toContain(field);
    }
    expect((await api.delete(`/setup-links/00000000-0000-7000-8000-000000000000`)).status).toBe(404);
    expect((await api.get(`/organizations/00000000-0000-7000-8000-000000000000/setup-links`)).status).toBe(404);
    const superOrg = await prisma().organization.findUniqueOrThrow({ where: { slug: porta.services.config.superAdminSlug } });
    const refused = await api.post<ErrorBody>(`/organizations/${superOrg.id}/setup-links`, {});
    expect(refused.status).toBe(409);
    expect(await prisma().setupLink.count({ where: { organizationId: superOrg.id } })).toBe(0);
  });
});

describe("setup links in the CLI", () => {
  it("`porta setup-links create <org slug>` prints the whole URL once; `list` shows the status without it", async () => {
    const env = { PORTA_CONFIG_DIR: "/nonexistent/porta-cli-setup-links", PORTA_TOKEN: accessToken, PORTA_SERVER: porta.baseUrl };
    const created = await runPorta(["setup-links", "create", tenant.org.slug, "--note", "From the CLI", "--expires-in-days", "2"], env);
    expect(created.code, created.stderr).toBe(0);
    const url = /url\s+(\S+)/.exec(created.stdout)?.[1];
    expect(url).toMatch(new RegExp(`^${porta.baseUrl}/${tenant.org.slug}/setup\\?token=[A-Za-z0-9_-]{43}$`));
    const listed = await runPorta(["setup-links", "list", tenant.org.slug, "--json"], env);
    expect(listed.code, listed.stderr).toBe(0);
    expect(listed.stdout).toContain("From the CLI");
    expect(listed.stdout).not.toContain(tokenOf(url!));
  });
});

describe("opening a setup link", () => {
  it("binds the link to the first browser, drops the token from the address, and refuses any other browser", async () => {
    const link = await createLink(tenant.org.id, { note: "Bound" });
    const first = new TestBrowser();
    const opened = await first.get(link.url);
    expect(opened.status).toBe(303);
    expect(opened.headers.get("location")).toBe(`/${tenant.org.slug}/setup`);
    const cookie = opened.headers.getSetCookie().find((c) => c.startsWith("porta_setup="))!;
    expect(cookie).toMatch(new RegExp(`Path=/${tenant.org.slug}/setup;.*HttpOnly; SameSite=Lax`));
    expect(cookie).not.toContain(tokenOf(link.url));
    const html = await (await first.get(setupUrl(tenant.org.slug))).text();
    expect(html).toContain(`Organization ${tenant.org.slug}`);
    // Nothing else of the organization: no users, no clients, no other settings.
    expect(html).not.toContain("/console/");

    // The same browser may open the link again; another may not.
    expect((await first.get(link.url)).status).toBe(303);
    const second = new TestBrowser();
    const refused = await second.get(link.url);
    expect(refused.status).toBe(403);
    expect(await refused.text()).toContain("already opened in another browser");
    expect(second.cookie("porta_setup")).toBeUndefined();
    expect((await second.get(setupUrl(tenant.org.slug))).status).toBe(404);

    const events = await prisma().auditEntry.findMany({ where: { targetId: link.id }, orderBy: { createdAt: "asc" } });
    expect(events.map((e) => [e.eventType, e.actorType, e.actorId])).toEqual([
      ["setup_link.created", "admin", expect.any(String)],
      ["setup_link.opened", "setup_link", link.id],
      ["setup_link.refused", "setup_link", link.id],
    ]);
    expect(events[2]!.data).toMatchObject({ reason: "opened_elsewhere" });
    const listed = await api.get<{ data: LinkView[] }>(`/organizations/${tenant.org.id}/setup-links`);
    expect(listed.body.data.find((l) => l.id === link.id)).toMatchObject({ status: "opened", openedAt: expect.any(String) });
  });

  it("refuses an expired or revoked link, in the browser that opened it too, and a token on another organization's address", async () => {
    const expiring = await createLink(tenant.org.id);
    const browser = new TestBrowser();
    await openIn(browser, expiring.url);
    await prisma().setupLink.update({ where: { id: expiring.id }, data: { expiresAt: new Date(Date.now() - 1000) } });
    const page = await browser.get(setupUrl(tenant.org.slug));
    expect(page.status).toBe(403);
    expect(await page.text()).toContain("has expired");
    const again = await new TestBrowser().get(expiring.url);
    expect(again.status).toBe(403);

    const revoked = await createLink(tenant.org.id);
    const holder = new TestBrowser();
    await openIn(holder, revoked.url);
    expect((await api.delete(`/setup-links/${revoked.id}`)).status).toBe(200);
    const gone = await holder.get(setupUrl(tenant.org.slug));
    expect(gone.status).toBe(403);
    expect(await gone.text()).toContain("was revoked");
    // A change posted from a page still open is refused too.
    expect((await holder.post(setupUrl(tenant.org.slug), { csrf: "x", intent: "finish" })).status).toBe(403);

    const fresh = await createLink(tenant.org.id);
    const elsewhere = await new TestBrowser().get(`${setupUrl(other.org.slug)}?token=${tokenOf(fresh.url)}`);
    expect(elsewhere.status).toBe(404);
    expect((await new TestBrowser().get(`${setupUrl(tenant.org.slug)}?token=not-a-real-token-at-all-000000`)).status).toBe(404);
    expect((await prisma().setupLink.findUniqueOrThrow({ where: { id: fresh.id } })).openedAt).toBeNull();
  });
});

describe("the setup pages", () => {
  it("connect a SAML IdP, prove a domain, issue a SCIM token that provisions users, and finish — each audited as the link", async () => {
    const link = await createLink(tenant.org.id, { note: "Acme IT" });
    const browser = new TestBrowser();
    const page = setupUrl(tenant.org.slug);
    const csrf = csrfOf(await openIn(browser, link.url));
    const secret = browser.cookie("porta_setup")!;
    expect((await prisma().setupLink.findUniqueOrThrow({ where: { id: link.id } })).openedSessionHash).toBe(sha256(secret));

    // Without the page's CSRF token nothing is done.
    expect((await browser.post(page, { csrf: "forged", intent: "addDomain", domain: "forged.test" })).status).toBe(403);

    const connected = await browser.post(page, {
      csrf,
      intent: "connect",
      kind: "saml",
      name: "Acme SAML",
      issuer: "https://idp.acme.test/entity",
      samlSsoUrl: "https://idp.acme.test/sso",
      samlCertificate: idp.cert,
      flags: ["enabled", "createAccounts"],
    }, { origin: porta.baseUrl });
    expect(connected.status, await connected.clone().text()).toBe(303);
    const provider = await prisma().identityProvider.findFirstOrThrow({ where: { organizationId: tenant.org.id, name: "Acme SAML" } });
    const shown = await (await browser.get(page)).text();
    // The values the IdP's administrator registers.
    expect(shown).toContain(`/${tenant.org.slug}/saml/${provider.id}/acs`);
    expect(shown).toContain(`/${tenant.org.slug}/saml/${provider.id}/metadata`);

    // A bad domain gets its message next to the field; a good one its TXT record, then verified.
    const bad = await browser.post(page, { csrf, intent: "addDomain", domain: "not a domain" });
    expect(bad.status).toBe(422);
    const domain = `acme-${Date.now()}.test`;
    expect((await browser.post(page, { csrf, intent: "addDomain", domain })).status).toBe(303);
    const row = await prisma().organizationDomain.findFirstOrThrow({ where: { organizationId: tenant.org.id, domain } });
    const withRecord = await (await browser.get(page)).text();
    expect(withRecord).toContain(`_porta-challenge.${domain}`);
    expect(withRecord).toContain(`porta-domain-verification=${row.verificationToken}`);
    dns.set(`_porta-challenge.${domain}`, [[`porta-domain-verification=${row.verificationToken}`]]);
    const verified = await browser.post(page, { csrf, intent: "verifyDomain", domainId: row.id });
    expect(verified.status).toBe(200);
    expect((await prisma().organizationDomain.findUniqueOrThrow({ where: { id: row.id } })).status).toBe("verified");

    // A SCIM token, shown once, that provisions, updates and deprovisions a user.
    const issued = await browser.post(page, { csrf, intent: "issueToken", tokenName: "Entra ID", expiresInDays: "30" });
    expect(issued.status).toBe(200);
    const token = /id="scim-token" readOnly="" value="(porta_scim_[A-Za-z0-9_-]+)"|value="(porta_scim_[A-Za-z0-9_-]+)"/.exec(await issued.text());
    const value = token?.[1] ?? token?.[2];
    expect(value).toBeDefined();
    const scim = scimClient(porta, tenant.org.slug, value!);
    const createdUser = await scim.send("POST", "/Users", { schemas: [USER_SCHEMA], userName: `jane@${domain}`, emails: [{ value: `jane@${domain}`, primary: true }], active: true });
    expect(createdUser.status).toBe(201);
    const userId = String(createdUser.body.id);
    expect((await scim.send("PATCH", `/Users/${userId}`, patch({ op: "replace", path: "emails", value: [{ value: `jane.doe@${domain}`, primary: true }] }))).status).toBe(200);
    expect((await prisma().user.findUniqueOrThrow({ where: { id: userId } })).email).toBe(`jane.doe@${domain}`);
    expect((await scim.send("PATCH", `/Users/${userId}`, patch({ op: "replace", path: "active", value: false }))).status).toBe(200);
    expect((await prisma().user.findUniqueOrThrow({ where: { id: userId } })).status).not.toBe("active");

    // Every change is audited with the link as the actor.
    const changes = await prisma().auditEntry.findMany({ where: { actorType: "setup_link", actorId: link.id }, orderBy: { createdAt: "asc" } });
    expect(changes.map((e) => e.eventType)).toEqual(expect.arrayContaining(["setup_link.opened", "identity_provider.created", "domain.added", "domain.verified", "scim_token.created"]));
    expect(changes.every((e) => e.organizationId === tenant.org.id)).toBe(true);

    // Finishing ends the link: the page says so, the cookie goes, and the link is refused from then on.
    const finished = await browser.post(page, { csrf, intent: "finish" });
    expect(finished.status).toBe(200);
    expect(await finished.text()).toContain("finished");
    expect(finished.headers.getSetCookie().some((c) => /^porta_setup=;.*Max-Age=0/.test(c))).toBe(true);
    expect((await prisma().setupLink.findUniqueOrThrow({ where: { id: link.id } })).finishedAt).not.toBeNull();
    const after = await new TestBrowser().get(link.url);
    expect(after.status).toBe(403);
    expect(await after.text()).toContain("was finished");
    expect(await prisma().auditEntry.count({ where: { targetId: link.id, eventType: "setup_link.finished", actorType: "setup_link" } })).toBe(1);

    // The token and the browser's secret are in no log line.
    const logs = porta.logs.text();
    expect(logs).not.toContain(tokenOf(link.url));
    expect(logs).not.toContain(value!);
    expect(logs).not.toContain(secret);
  });

  it("cannot touch another organization's domains, SCIM tokens or connections through the page: 404, nothing written", async () => {
    const link = await createLink(tenant.org.id);
    const browser = new TestBrowser();
    const csrf = csrfOf(await openIn(browser, link.url));
    const page = setupUrl(tenant.org.slug);
    const theirs = await prisma().organizationDomain.create({ data: { organizationId: other.org.id, domain: `theirs-${Date.now()}.test`, verificationToken: "t".repeat(32) } });
    const theirToken = await issueScimToken(api, other.org.id);
    expect((await browser.post(page, { csrf, intent: "removeDomain", domainId: theirs.id })).status).toBe(404);
    expect((await browser.post(page, { csrf, intent: "verifyDomain", domainId: theirs.id })).status).toBe(404);
    expect((await browser.post(page, { csrf, intent: "revokeToken", tokenId: theirToken.id })).status).toBe(404);
    const theirProvider = await prisma().identityProvider.create({ data: { organizationId: other.org.id, name: "Their SAML", kind: "saml", issuer: "https://their-idp.test", clientId: "" } });
    expect((await browser.post(page, { csrf, intent: "refreshMetadata", providerId: theirProvider.id })).status).toBe(404);
    expect(await prisma().organizationDomain.findUnique({ where: { id: theirs.id } })).toMatchObject({ status: "pending", lastCheckedAt: null });
    expect((await prisma().scimToken.findUniqueOrThrow({ where: { id: theirToken.id } })).revokedAt).toBeNull();
    expect(await prisma().auditEntry.count({ where: { actorType: "setup_link", actorId: link.id, eventType: { not: "setup_link.opened" } } })).toBe(0);
  });
});

describe("the setup link's caller", () => {
  const context = () => ({ services: porta.services, requestId: "setup-link-test", req: { ip: "127.0.0.1" } }) as unknown as AppLoadContext;
  const as = (organizationId: string) => {
    const caller = setupLinkCaller({ id: "00000000-0000-7000-8000-0000000000aa", organizationId, note: "test" });
    return async () => caller;
  };

  it("may run the setup operations only: users, keys, clients, organizations, deleting a connection and setup links themselves are 403", async () => {
    const ctx = context();
    const auth = as(tenant.org.id);
    expect((await callAdmin(ctx, "", "users.list", { params: { orgId: tenant.org.id } }, auth)).status).toBe(403);
    expect((await callAdmin(ctx, "", "keys.listByOrganization", { params: { orgId: tenant.org.id } }, auth)).status).toBe(403);
    expect((await callAdmin(ctx, "", "clients.list", { query: { organizationId: tenant.org.id } }, auth)).status).toBe(403);
    expect((await callAdmin(ctx, "", "organizations.get", { params: { id: tenant.org.id } }, auth)).status).toBe(403);
    expect((await callAdmin(ctx, "", "setupLinks.create", { params: { orgId: tenant.org.id }, body: {} }, auth)).status).toBe(403);
    const provider = await prisma().identityProvider.create({ data: { organizationId: tenant.org.id, name: "Keep me", kind: "oidc", issuer: "https://keep.test", clientId: "c" } });
    expect((await callAdmin(ctx, "", "identityProviders.delete", { params: { id: provider.id } }, auth)).status).toBe(403);
    expect(await prisma().identityProvider.count({ where: { id: provider.id } })).toBe(1);
    expect((await callAdmin(ctx, "", "domains.list", { params: { orgId: tenant.org.id } }, auth)).status).toBe(200);
  });

  it("is held to its organization: another organization's ids and bodies are 404 and nothing is written", async () => {
    const ctx = context();
    const auth = as(tenant.org.id);
    const theirs = await prisma().identityProvider.create({ data: { organizationId: other.org.id, name: "Theirs", kind: "oidc", issuer: "https://theirs.test", clientId: "c" } });
    expect((await callAdmin(ctx, "", "identityProviders.get", { params: { id: theirs.id } }, auth)).status).toBe(404);
    expect((await callAdmin(ctx, "", "identityProviders.update", { params: { id: theirs.id }, body: { name: "Mine now" } }, auth)).status).toBe(404);
    expect((await prisma().identityProvider.findUniqueOrThrow({ where: { id: theirs.id } })).name).toBe("Theirs");
    const before = await prisma().identityProvider.count({ where: { organizationId: other.org.id } });
    const created = await callAdmin(ctx, "", "identityProviders.create", { body: { organizationId: other.org.id, kind: "oidc", name: "Sneaky", issuer: "https://sneaky.test", clientId: "c", clientSecret: "s" } }, auth);
    expect(created.status).toBe(404);
    expect(await prisma().identityProvider.count({ where: { organizationId: other.org.id } })).toBe(before);
    expect((await callAdmin(ctx, "", "domains.add", { params: { orgId: other.org.id }, body: { domain: "sneaky.test" } }, auth)).status).toBe(404);
    expect((await callAdmin(ctx, "", "scimTokens.create", { params: { orgId: other.org.id }, body: { name: "Sneaky" } }, auth)).status).toBe(404);
    expect(await prisma().scimToken.count({ where: { organizationId: other.org.id, name: "Sneaky" } })).toBe(0);
    // Listing another organization's connections is not found; its own lists only its own.
    expect((await callAdmin(ctx, "", "identityProviders.list", { query: { organizationId: other.org.id } }, auth)).status).toBe(404);
    const listed = await callAdmin(ctx, "", "identityProviders.list", { query: { organizationId: tenant.org.id } }, auth);
    expect(listed.ok && listed.body.data.length > 0 && listed.body.data.every((p) => p.organizationId === tenant.org.id)).toBe(true);
  });

  it("setup links' own operations hold a caller bound to one organization to it: another organization's link is 404 and stays", async () => {
    // A caller bound to the tenant that may run every operation, as an organization's own administrators' door would.
    const bound = async () => ({ ...setupLinkCaller({ id: "00000000-0000-7000-8000-0000000000bb", organizationId: tenant.org.id, note: null }), may: () => true });
    const theirs = await createLink(other.org.id);
    const ctx = context();
    expect((await callAdmin(ctx, "", "setupLinks.revoke", { params: { id: theirs.id } }, bound)).status).toBe(404);
    expect((await callAdmin(ctx, "", "setupLinks.get", { params: { id: theirs.id } }, bound)).status).toBe(404);
    expect((await callAdmin(ctx, "", "setupLinks.list", { params: { orgId: other.org.id } }, bound)).status).toBe(404);
    expect((await callAdmin(ctx, "", "setupLinks.create", { params: { orgId: other.org.id }, body: {} }, bound)).status).toBe(404);
    expect((await prisma().setupLink.findUniqueOrThrow({ where: { id: theirs.id } })).revokedAt).toBeNull();
    expect((await callAdmin(ctx, "", "setupLinks.list", { params: { orgId: tenant.org.id } }, bound)).status).toBe(200);
  });
});
