import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { resources } from "~/i18n/config";
import { createAccountTenant, shown } from "../account/helpers";
import { consoleSignIn, pageWithCsrf } from "../console/helpers";
import { fakeDns } from "../support/domains";
import { startTestPorta, type TestPorta } from "../support/porta";

/** Decision 086 in the console: add a domain, see the TXT record to create, verify it, see unverified claims, remove it. */
describe("verified domains: the console", () => {
  let porta: TestPorta;
  const dns = fakeDns();
  const prisma = () => porta.services.db.prisma;
  const words = resources.en.console.domains;

  beforeAll(async () => {
    porta = await startTestPorta({ dnsResolver: dns });
  });
  afterAll(async () => {
    await porta.stop();
  });

  it("adds a domain with errors beside the field, shows its record, verifies it and removes it; marks a connection's unverified claim", async () => {
    const tenant = await createAccountTenant(porta);
    const domain = `corp-${randomBytes(3).toString("hex")}.test`;
    await prisma().identityProvider.create({ data: { organizationId: tenant.org.id, name: "Corp SSO", kind: "oidc", issuer: "https://sso.corp.test", clientId: "c", domains: [domain] } });
    const visit = await consoleSignIn(porta);
    const provider = await prisma().identityProvider.findFirstOrThrow({ where: { organizationId: tenant.org.id } });
    const providerUrl = `${porta.baseUrl}/console/organizations/${tenant.org.id}/identity-providers/${provider.id}`;
    const unverified = resources.en.console.idp.unverifiedDomains.replace("{{domains}}", domain);
    expect(shown((await pageWithCsrf(visit.browser, providerUrl)).html)).toContain(unverified);
    const url = `${porta.baseUrl}/console/organizations/${tenant.org.id}/domains`;
    const page = await pageWithCsrf(visit.browser, url);
    expect(page.res.status).toBe(200);
    expect(shown(page.html)).toContain(words.none);
    expect(shown(page.html)).toContain(words.unverifiedClaims);
    expect(shown(page.html)).toContain(domain);

    const refused = await visit.browser.post(url, { csrf: page.csrf, intent: "add", domain: "10.0.0.1" });
    expect(refused.status).toBe(422);
    const refusedHtml = await refused.text();
    expect(shown(refusedHtml)).toContain("must be a domain name, not an IP address");
    expect(refusedHtml).toMatch(/id="domain-error"/);
    expect(await prisma().organizationDomain.count({ where: { organizationId: tenant.org.id } })).toBe(0);

    const added = await visit.browser.post(url, { csrf: page.csrf, intent: "add", domain: domain.toUpperCase() });
    expect(added.status).toBe(302);
    const row = await prisma().organizationDomain.findFirstOrThrow({ where: { organizationId: tenant.org.id } });
    expect(row).toMatchObject({ domain, status: "pending" });
    const listed = await pageWithCsrf(visit.browser, url);
    expect(shown(listed.html)).toContain(`_porta-challenge.${domain}`);
    expect(shown(listed.html)).toContain(`porta-domain-verification=${row.verificationToken}`);

    const failed = await visit.browser.post(url, { csrf: listed.csrf, intent: "verify", domainId: row.id });
    expect(failed.status).toBe(200);
    expect(shown(await failed.text())).toContain(`no TXT record at _porta-challenge.${domain}`);

    dns.set(`_porta-challenge.${domain}`, [[`porta-domain-verification=${row.verificationToken}`]]);
    const ok = await visit.browser.post(url, { csrf: listed.csrf, intent: "verify", domainId: row.id });
    expect(shown(await ok.text())).toContain(words.checkedOk);
    const after = await pageWithCsrf(visit.browser, url);
    expect(shown(after.html)).not.toContain(words.unverifiedClaims);
    expect(shown(after.html)).toContain(words.status.verified);
    expect(shown((await pageWithCsrf(visit.browser, providerUrl)).html)).not.toContain(unverified);

    // Another organization's page does not act on this organization's domain.
    const other = await createAccountTenant(porta);
    const otherUrl = `${porta.baseUrl}/console/organizations/${other.org.id}/domains`;
    const otherPage = await pageWithCsrf(visit.browser, otherUrl);
    expect((await visit.browser.post(otherUrl, { csrf: otherPage.csrf, intent: "remove", domainId: row.id })).status).toBe(404);
    expect((await visit.browser.post(otherUrl, { csrf: otherPage.csrf, intent: "verify", domainId: row.id })).status).toBe(404);
    expect((await visit.browser.post(otherUrl, { csrf: otherPage.csrf, intent: "remove", domainId: "not-an-id" })).status).toBe(404);
    expect(await prisma().organizationDomain.count({ where: { id: row.id } })).toBe(1);

    const removed = await visit.browser.post(url, { csrf: after.csrf, intent: "remove", domainId: row.id });
    expect(removed.status).toBe(302);
    expect(await prisma().organizationDomain.count({ where: { organizationId: tenant.org.id } })).toBe(0);
  });
});
