import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { jobServiceContext } from "~/.server/context";
import { recheckDueDomains } from "~/.server/domains/jobs";
import type { OrganizationDomain } from "~/schemas/domain";
import { createTenant, type Tenant } from "../login/helpers";
import { adminApi, obtainAdminTokens } from "../support/admin-api";
import { fakeDns } from "../support/domains";
import { createOrganization } from "../support/factories";
import { startTestPorta, type TestPorta } from "../support/porta";
import { answer, createSamlConnection, follow, openLogin, postToAcs, startSaml, type SamlConnectionRow } from "../support/saml-connection";
import { makeKeyPair } from "../support/saml-idp";

/**
 * Decision 086: an organization proves a domain by a DNS TXT record (a fake resolver stands in
 * for DNS), keeps it by the daily re-check, and only a verified domain lets a connection's
 * assumeVerifiedEmails create or link accounts.
 */
describe("verified domains", () => {
  let porta: TestPorta;
  let api: ReturnType<typeof adminApi>;
  const dns = fakeDns();
  const idp = makeKeyPair();
  const prisma = () => porta.services.db.prisma;
  const DAY = 24 * 60 * 60_000;

  beforeAll(async () => {
    porta = await startTestPorta({ dnsResolver: dns });
    api = adminApi(porta, (await obtainAdminTokens(porta)).accessToken);
  });
  afterAll(async () => {
    await porta.stop();
  });

  const audit = (targetId: string) => prisma().auditEntry.findMany({ where: { targetId }, orderBy: { createdAt: "asc" } });
  const unique = () => `corp-${randomBytes(3).toString("hex")}.test`;

  it("adds a domain pending with the TXT record to create, verifies it once the record appears, and lapses it after three failed daily checks", async () => {
    const org = await createOrganization(prisma());
    const domain = unique();
    const added = await api.post<OrganizationDomain>(`/organizations/${org.id}/domains`, { domain: ` ${domain.toUpperCase()} ` });
    expect(added.status, JSON.stringify(added.body)).toBe(201);
    expect(added.body).toMatchObject({ domain, status: "pending", verifiedAt: null, record: { type: "TXT", name: `_porta-challenge.${domain}`, value: expect.stringMatching(/^porta-domain-verification=[A-Za-z0-9_-]{32}$/) } });
    const id = added.body.id;

    // No record yet: it stays pending, with the reason.
    const early = await api.post<OrganizationDomain>(`/domains/${id}/verify`);
    expect(early.status).toBe(200);
    expect(early.body).toMatchObject({ status: "pending", lastError: `no TXT record at _porta-challenge.${domain}`, failures: 1 });

    // A record with another value, then DNS that does not answer: still pending.
    dns.set(`_porta-challenge.${domain}`, [["porta-domain-verification=", "not-the-token"]]);
    expect((await api.post<OrganizationDomain>(`/domains/${id}/verify`)).body).toMatchObject({ status: "pending", lastError: expect.stringMatching(/another token/) });
    dns.timeOut(`_porta-challenge.${domain}`);
    expect((await api.post<OrganizationDomain>(`/domains/${id}/verify`)).body).toMatchObject({ status: "pending", lastError: expect.stringMatching(/timed out/) });

    // The record appears, split into strings as DNS may hand it back, next to another TXT record.
    const value = added.body.record.value;
    dns.set(`_porta-challenge.${domain}`, [["v=spf1 -all"], [value.slice(0, 10), value.slice(10)]]);
    const verified = await api.post<OrganizationDomain>(`/domains/${id}/verify`);
    expect(verified.body).toMatchObject({ status: "verified", lastError: null, failures: 0, verifiedAt: expect.any(String) });
    expect((await api.get<OrganizationDomain>(`/domains/${id}`)).body).toMatchObject({ status: "verified" });
    expect((await api.get<{ data: OrganizationDomain[] }>(`/organizations/${org.id}/domains`)).body.data.map((d) => [d.domain, d.status])).toEqual([[domain, "verified"]]);

    // The record goes away: the daily re-check fails three times over two days, then the domain lapses.
    dns.remove(`_porta-challenge.${domain}`);
    const ctx = jobServiceContext(porta.services);
    const start = Date.now() + DAY + 60_000;
    for (const day of [0, 1]) {
      await recheckDueDomains(ctx, { domainId: id }, new Date(start + day * DAY));
      expect(await prisma().organizationDomain.findUniqueOrThrow({ where: { id } })).toMatchObject({ status: "verified", failures: day + 1 });
    }
    await recheckDueDomains(ctx, { domainId: id }, new Date(start + 2 * DAY));
    expect(await prisma().organizationDomain.findUniqueOrThrow({ where: { id } })).toMatchObject({ status: "lapsed", failures: 3, verifiedAt: null });

    const events = (await audit(id)).map((e) => e.eventType);
    expect(events).toEqual(["domain.added", "domain.check_failed", "domain.check_failed", "domain.check_failed", "domain.verified", "domain.lapsed"]);
    const lapsed = (await audit(id)).at(-1)!;
    expect(lapsed).toMatchObject({ actorType: "system", organizationId: org.id, data: { domain, trigger: "schedule", failures: 3 } });

    // Removing is audited with the status it had.
    const removed = await api.delete<OrganizationDomain>(`/domains/${id}`);
    expect(removed.status).toBe(200);
    expect(await prisma().organizationDomain.count({ where: { id } })).toBe(0);
    expect((await audit(id)).at(-1)).toMatchObject({ eventType: "domain.removed", data: { domain, status: "lapsed" } });
  });

  it("the scheduled run retries pending domains a few times, then leaves them; verified ones are due daily", async () => {
    const org = await createOrganization(prisma());
    const domain = unique();
    const added = await api.post<OrganizationDomain>(`/organizations/${org.id}/domains`, { domain });
    const ctx = jobServiceContext(porta.services);
    let now = Date.now() + 60_000;
    for (let i = 0; i < 8; i++) {
      await recheckDueDomains(ctx, {}, new Date(now));
      now += 2 * 60 * 60_000;
    }
    // Six automatic tries, then left for an administrator.
    expect(await prisma().organizationDomain.findUniqueOrThrow({ where: { id: added.body.id } })).toMatchObject({ status: "pending", failures: 6 });
    dns.set(`_porta-challenge.${domain}`, [[added.body.record.value]]);
    await recheckDueDomains(ctx, {}, new Date(now));
    expect(await prisma().organizationDomain.findUniqueOrThrow({ where: { id: added.body.id } })).toMatchObject({ status: "pending" });
    expect((await api.post<OrganizationDomain>(`/domains/${added.body.id}/verify`)).body.status).toBe("verified");
  });

  it("refuses bad domains with the reason beside the field, a domain twice, and another organization's domain ids answer 404", async () => {
    const org = await createOrganization(prisma());
    for (const bad of ["10.0.0.1", "a..b.test", "*.corp.test", "corp.test.", "x".repeat(300), "corp\u0000.test", "localhost", "https://corp.test/"]) {
      const res = await api.post<{ error: { code: string; details: Array<{ field: string }> } }>(`/organizations/${org.id}/domains`, { domain: bad });
      expect(res.status, bad).toBe(422);
      expect(res.body.error.details[0]?.field).toBe("domain");
    }
    const domain = unique();
    expect((await api.post(`/organizations/${org.id}/domains`, { domain })).status).toBe(201);
    const twice = await api.post<{ error: { code: string } }>(`/organizations/${org.id}/domains`, { domain: domain.toUpperCase() });
    expect(twice.status).toBe(409);
    expect(twice.body.error.code).toBe("domain_exists");

    // The same domain may be added by another organization: each proves it for itself.
    const other = await createOrganization(prisma());
    const theirs = await api.post<OrganizationDomain>(`/organizations/${other.id}/domains`, { domain });
    expect(theirs.status).toBe(201);
    // Ids are global: the organization-scoped list shows only its own, and an unknown or malformed id is 404 / 422.
    expect((await api.get<{ data: OrganizationDomain[] }>(`/organizations/${org.id}/domains`)).body.data.map((d) => d.id)).not.toContain(theirs.body.id);
    expect((await api.get(`/domains/0190a7d2-0000-7000-8000-000000000000`)).status).toBe(404);
    expect((await api.post(`/domains/0190a7d2-0000-7000-8000-000000000000/verify`)).status).toBe(404);
    expect((await api.delete(`/domains/0190a7d2-0000-7000-8000-000000000000`)).status).toBe(404);
    expect((await api.get(`/domains/not-an-id`)).status).toBe(422);
    expect((await api.get(`/organizations/0190a7d2-0000-7000-8000-000000000000/domains`)).status).toBe(404);
    const deleted = await createOrganization(prisma(), { status: "deleted" });
    const hidden = await prisma().organizationDomain.create({ data: { organizationId: deleted.id, domain, verificationToken: "t" } });
    expect((await api.get(`/domains/${hidden.id}`)).status).toBe(404);
  });

  describe("SAML connections with assumeVerifiedEmails", () => {
    const tenant = () => createTenant(porta, { defaultLoginMethods: ["password", "federated"], client: { skipConsent: true } });

    async function signIn(t: Tenant, connection: SamlConnectionRow, email: string, nameId: string) {
      const flow = await openLogin(t);
      const request = await startSaml(flow, connection);
      const posted = await postToAcs(flow, connection.acsUrl, answer(connection, request, idp, { nameId, attributes: { email: [email] } }), request.relayState);
      return follow(flow.jar, posted, connection.acsUrl, (u) => u.startsWith(t.redirectUri));
    }

    it("create an account just in time only once the organization verified the domain, and link an existing one only then", async () => {
      const t = await tenant();
      const domain = unique();
      const connection = await createSamlConnection(porta, t.org, { idp, domains: [domain], assumeVerifiedEmails: true, verifiedDomains: false });
      const email = `ada-${randomBytes(3).toString("hex")}@${domain}`;

      const refused = await signIn(t, connection, email, "ada");
      expect(refused.res.status).toBe(403);
      expect(await prisma().user.count({ where: { organizationId: t.org.id, email } })).toBe(0);
      const failure = await prisma().auditEntry.findFirstOrThrow({ where: { organizationId: t.org.id, eventType: "auth.login.failure" }, orderBy: { createdAt: "desc" } });
      expect(failure.data).toMatchObject({ method: "saml", reason: "unverified_email", why: "domain_not_verified" });

      // An existing account of that domain is not linked either.
      const victimEmail = `grace-${randomBytes(3).toString("hex")}@${domain}`;
      const victim = await prisma().user.create({ data: { organizationId: t.org.id, email: victimEmail, emailVerified: true } });
      expect((await signIn(t, connection, victimEmail, "eve")).res.status).toBe(403);
      expect(await prisma().federatedIdentity.count({ where: { userId: victim.id } })).toBe(0);

      // Pending is not enough.
      const added = await api.post<OrganizationDomain>(`/organizations/${t.org.id}/domains`, { domain });
      expect(added.body.claimedBy).toEqual([{ id: connection.id, name: connection.name }]);
      expect((await signIn(t, connection, email, "ada")).res.status).toBe(403);

      dns.set(added.body.record.name, [[added.body.record.value]]);
      expect((await api.post<OrganizationDomain>(`/domains/${added.body.id}/verify`)).body.status).toBe("verified");
      const created = await signIn(t, connection, email, "ada");
      expect(created.url.startsWith(t.redirectUri), created.url).toBe(true);
      expect(await prisma().user.findFirst({ where: { organizationId: t.org.id, email } })).toMatchObject({ emailVerified: true });
      const linked = await signIn(t, connection, victimEmail, "grace");
      expect(linked.url.startsWith(t.redirectUri), linked.url).toBe(true);
      expect(await prisma().federatedIdentity.count({ where: { userId: victim.id } })).toBe(1);

      // Another organization's verification of the same domain proves nothing here.
      const t2 = await tenant();
      const elsewhere = await createSamlConnection(porta, t2.org, { idp, domains: [domain], assumeVerifiedEmails: true, verifiedDomains: false });
      expect((await signIn(t2, elsewhere, email, "ada")).res.status).toBe(403);
      expect(await prisma().user.count({ where: { organizationId: t2.org.id, email } })).toBe(0);
    });
  });
});
