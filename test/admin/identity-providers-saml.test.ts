import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { jobServiceContext } from "~/.server/context";
import { refreshDueSamlMetadata } from "~/.server/federation/saml-jobs";
import { adminApi, obtainAdminTokens } from "../support/admin-api";
import { createClient, createOrganization } from "../support/factories";
import { startTestPorta, type TestPorta } from "../support/porta";
import { derOf, idpCertificate, idpMetadata } from "../support/saml";

/**
 * SAML connections through the Admin API (decision 081): made from the IdP's metadata (pasted or
 * fetched through the outbound guard) or from its entity ID, SSO URL and certificates; hostile
 * metadata and references outside the organization refused with field details; the decryption
 * key generated, kept encrypted and never answered; the metadata refreshed on demand and on
 * schedule, audited with what changed.
 */

interface Problem {
  error: { details?: Array<{ field: string; message: string }> };
}
interface Provider {
  id: string;
  kind: string;
  issuer: string;
  clientId: string;
  hasClientSecret: boolean;
  saml: null | {
    entityId: string;
    acsUrl: string;
    spMetadataUrl: string;
    ssoUrl: string;
    signingCertificates: string[];
    metadataUrl: string | null;
    metadataRefreshedAt: string | null;
    nameIdFormat: string;
    allowSha1: boolean;
    idpInitiatedClientId: string | null;
    groupRoles: Array<{ group: string; roles: string[] }>;
    encryptionCertificate: string | null;
    certificates: Array<{ subject: string; notAfter: string; fingerprint: string } | null>;
    encryption: { subject: string; notAfter: string } | null;
  };
}

/** Serves whatever `body` holds at /metadata, on 127.0.0.1. */
class MetadataServer {
  body = "";
  status = 200;
  requests = 0;
  /** Runs while a request is being answered (a change made during the fetch). */
  during: (() => Promise<unknown>) | null = null;
  server: Server = createServer((_req, res) => {
    this.requests += 1;
    void (this.during?.() ?? Promise.resolve()).then(() => {
      res.writeHead(this.status, { "content-type": "application/samlmetadata+xml" });
      res.end(this.body);
    });
  });
  get url() {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/metadata`;
  }
  start() {
    return new Promise<void>((resolve) => this.server.listen(0, "127.0.0.1", resolve));
  }
  stop() {
    return new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}

const fieldsOf = (body: unknown) => ((body as Problem).error.details ?? []).map((d) => d.field);

describe("SAML connections in the Admin API", () => {
  let porta: TestPorta;
  let api: ReturnType<typeof adminApi>;
  let certA = "";
  let certB = "";
  const idp = new MetadataServer();
  const prisma = () => porta.services.db.prisma;

  beforeAll(async () => {
    // The IdP's metadata is served on 127.0.0.1: fetched only because this deployment allows private networks.
    porta = await startTestPorta({ env: { OUTBOUND_ALLOW_PRIVATE_NETWORKS: "true" } });
    api = adminApi(porta, (await obtainAdminTokens(porta)).accessToken);
    certA = await idpCertificate("idp-a.example.com");
    certB = await idpCertificate("idp-b.example.com");
    await idp.start();
  });
  afterAll(async () => {
    await idp.stop();
    await porta.stop();
  });

  it("creates a connection from pasted metadata and answers Porta's addresses and the certificates described", async () => {
    const org = await createOrganization(prisma());
    await prisma().role.create({ data: { organizationId: org.id, name: "editor" } });
    const client = await createClient(prisma(), org.id, { initiateLoginUri: "https://rp.example.com/login" });
    const xml = idpMetadata({ entityId: "https://idp.example.com/entity", ssoUrl: "https://idp.example.com/sso", certificates: [certA, certB] });
    const created = await api.post<Provider>("/identity-providers", {
      organizationId: org.id,
      kind: "saml",
      name: "Corp SAML",
      samlMetadataXml: xml,
      domains: ["corp.example"],
      claimMapping: { email: "http://schemas.xmlsoap.org/ws/2005/05/identity/claims/emailaddress" },
      saml: { groupRoles: [{ group: "Editors", roles: ["editor"] }], idpInitiatedClientId: client.client.id },
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    expect(created.headers.get("etag")).toBeTruthy();
    const body = created.body;
    expect(body).toMatchObject({ kind: "saml", issuer: "https://idp.example.com/entity", clientId: "", hasClientSecret: false });
    const base = `${porta.baseUrl}/${org.slug}/saml/${body.id}`;
    expect(body.saml).toMatchObject({
      entityId: `${base}/metadata`,
      acsUrl: `${base}/acs`,
      spMetadataUrl: `${base}/metadata`,
      ssoUrl: "https://idp.example.com/sso",
      metadataUrl: null,
      // The IdP lists emailAddress: asked for when the body names no format.
      nameIdFormat: "urn:oasis:names:tc:SAML:1.1:nameid-format:emailAddress",
      allowSha1: false,
      idpInitiatedClientId: client.client.id,
      groupRoles: [{ group: "Editors", roles: ["editor"] }],
      encryptionCertificate: null,
      encryption: null,
    });
    expect(body.saml!.signingCertificates).toHaveLength(2);
    expect(body.saml!.certificates.map((c) => c?.subject)).toEqual(["CN=idp-a.example.com", "CN=idp-b.example.com"]);
    expect(Date.parse(body.saml!.certificates[0]!.notAfter)).toBeGreaterThan(Date.now() + 9 * 365 * 86_400_000);

    const audit = await prisma().auditEntry.findFirstOrThrow({ where: { targetId: body.id, eventType: "identity_provider.created" } });
    expect(audit.organizationId).toBe(org.id);

    // The list holds it beside an OpenID Connect provider, each with its own shape.
    await api.post("/identity-providers", { organizationId: org.id, kind: "google", name: "Google", clientId: "g" });
    const list = await api.get<{ data: Provider[] }>(`/identity-providers?organizationId=${org.id}`);
    expect(list.body.data.map((p) => [p.kind, p.saml === null])).toEqual([
      ["saml", false],
      ["google", true],
    ]);
  });

  it("creates a connection from entity ID, SSO URL and a PEM or base64 certificate, with encryption: the key stays inside", async () => {
    const org = await createOrganization(prisma());
    const created = await api.post<Provider>("/identity-providers", {
      organizationId: org.id,
      kind: "saml",
      name: "By hand",
      issuer: "urn:example:idp",
      saml: { ssoUrl: "https://idp.example.net/saml/sso", signingCertificates: [certA, derOf(certB)], allowSha1: true, nameIdFormat: "urn:oasis:names:tc:SAML:2.0:nameid-format:persistent", encryption: true },
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    expect(created.body).toMatchObject({ issuer: "urn:example:idp", hasClientSecret: true, saml: { allowSha1: true, nameIdFormat: "urn:oasis:names:tc:SAML:2.0:nameid-format:persistent" } });
    expect(created.body.saml!.encryptionCertificate).toContain("BEGIN CERTIFICATE");
    expect(created.body.saml!.encryption).toMatchObject({ subject: "CN=Porta SAML urn:example:idp" });
    expect(JSON.stringify(created.body)).not.toContain("PRIVATE KEY");
    const row = await prisma().identityProvider.findUniqueOrThrow({ where: { id: created.body.id } });
    expect(row.clientSecretEncrypted).not.toContain("PRIVATE KEY");
    const key = porta.services.encrypter.decrypt(row.clientSecretEncrypted!, `identity-provider-secret:${row.id}`);
    expect(key).toContain("BEGIN PRIVATE KEY");
    const entries = await prisma().auditEntry.findMany({ where: { targetId: row.id } });
    expect(JSON.stringify(entries)).not.toContain("PRIVATE KEY");

    // Turning encryption off drops the key; on again makes a new one.
    const etag = created.headers.get("etag")!;
    const off = await api.put<Provider>(`/identity-providers/${row.id}`, { saml: { encryption: false } }, { "if-match": etag });
    expect(off.status).toBe(200);
    expect(off.body).toMatchObject({ hasClientSecret: false, saml: { encryptionCertificate: null, encryption: null } });
    const on = await api.put<Provider>(`/identity-providers/${row.id}`, { saml: { encryption: true } }, { "if-match": off.headers.get("etag")! });
    expect(on.body.hasClientSecret).toBe(true);
    expect(on.body.saml!.encryptionCertificate).not.toBe(created.body.saml!.encryptionCertificate);
  });

  it("fetches a metadata URL with no transaction open: a slow IdP holds no database connection, at creation, on demand and on schedule", async () => {
    const org = await createOrganization(prisma());
    idp.body = idpMetadata({ entityId: "https://idp.example.org/slow", ssoUrl: "https://idp.example.org/sso", certificates: [certA] });
    const openTransactions: number[] = [];
    idp.during = async () => {
      const [row] = await prisma().$queryRaw<Array<{ n: number }>>`SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND state LIKE 'idle in transaction%'`;
      openTransactions.push(row!.n);
    };
    try {
      const created = await api.post<Provider>("/identity-providers", { organizationId: org.id, kind: "saml", name: "Slow IdP", samlMetadataUrl: idp.url });
      expect(created.status, JSON.stringify(created.body)).toBe(201);
      expect((await api.post<Provider>(`/identity-providers/${created.body.id}/saml-metadata/refresh`)).status).toBe(200);
      await refreshDueSamlMetadata(jobServiceContext(porta.services), { providerId: created.body.id });
    } finally {
      idp.during = null;
    }
    expect(openTransactions).toEqual([0, 0, 0]);
  });

  it("creates a connection from a metadata URL through the outbound guard and refreshes it on demand and on schedule", async () => {
    const org = await createOrganization(prisma());
    idp.body = idpMetadata({ entityId: "https://idp.example.org/entity", ssoUrl: "https://idp.example.org/sso", certificates: [certA] });
    const created = await api.post<Provider>("/identity-providers", { organizationId: org.id, kind: "saml", name: "From URL", samlMetadataUrl: idp.url });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    expect(created.body.saml).toMatchObject({ metadataUrl: idp.url, ssoUrl: "https://idp.example.org/sso" });
    expect(created.body.saml!.metadataRefreshedAt).not.toBeNull();
    const id = created.body.id;

    // A refresh that finds the same changes nothing but the time of the copy.
    const same = await api.post<Provider>(`/identity-providers/${id}/saml-metadata/refresh`);
    expect(same.status).toBe(200);
    expect(same.headers.get("etag")).toBe(created.headers.get("etag"));

    // The IdP rolls its certificate over and moves its SSO URL: the refresh takes both and audits what changed.
    idp.body = idpMetadata({ entityId: "https://idp.example.org/entity", ssoUrl: "https://idp.example.org/sso2", certificates: [certA, certB] });
    const changed = await api.post<Provider>(`/identity-providers/${id}/saml-metadata/refresh`);
    expect(changed.body.saml).toMatchObject({ ssoUrl: "https://idp.example.org/sso2" });
    expect(changed.body.saml!.signingCertificates).toHaveLength(2);
    expect(changed.headers.get("etag")).not.toBe(created.headers.get("etag"));
    const entry = await prisma().auditEntry.findFirstOrThrow({ where: { targetId: id, eventType: "identity_provider.saml_metadata_refreshed" }, orderBy: { createdAt: "desc" } });
    expect(entry.data).toMatchObject({ trigger: "api", change: { ssoUrl: { before: "https://idp.example.org/sso", after: "https://idp.example.org/sso2" }, certificates: { after: [expect.any(String), expect.any(String)] } } });

    // A failed on-demand refresh is a 422 and keeps the settings.
    idp.status = 500;
    const failed = await api.post<Problem>(`/identity-providers/${id}/saml-metadata/refresh`);
    expect(failed.status).toBe(422);
    expect(fieldsOf(failed.body)).toEqual(["saml.metadataUrl"]);

    // The scheduled run fetches only what is due; a failure keeps the settings and logs one line.
    const ctx = jobServiceContext(porta.services);
    const later = new Date(Date.now() + 7 * 3600_000);
    const failedRun = await refreshDueSamlMetadata(ctx, {}, later);
    expect(failedRun.failed).toBeGreaterThanOrEqual(1);
    const line = porta.logs.lines.find((l) => l.event === "saml_metadata_refresh_failed" && l.providerId === id);
    expect(line).toMatchObject({ organizationId: org.id, reason: expect.stringContaining("HTTP 500") });
    expect((await api.get<Provider>(`/identity-providers/${id}`)).body.saml!.ssoUrl).toBe("https://idp.example.org/sso2");

    idp.status = 200;
    idp.body = idpMetadata({ entityId: "https://idp.example.org/entity", ssoUrl: "https://idp.example.org/sso3", certificates: [certB] });
    const notDue = await refreshDueSamlMetadata(ctx, { providerId: undefined }, new Date());
    expect(notDue.refreshed).toBe(0);
    const run = await refreshDueSamlMetadata(ctx, { providerId: id });
    expect(run).toMatchObject({ refreshed: 1, changed: 1, failed: 0 });
    const after = await api.get<Provider>(`/identity-providers/${id}`);
    expect(after.body.saml).toMatchObject({ ssoUrl: "https://idp.example.org/sso3" });
    expect(after.body.saml!.certificates.map((c) => c?.subject)).toEqual(["CN=idp-b.example.com"]);
    expect(await prisma().auditEntry.count({ where: { targetId: id, eventType: "identity_provider.saml_metadata_refreshed", data: { path: ["trigger"], equals: "schedule" } } })).toBe(1);

    // An administrator's change made while the metadata is being fetched is not overwritten: the refresh fails as stale.
    idp.body = idpMetadata({ entityId: "https://idp.example.org/entity", ssoUrl: "https://idp.example.org/sso4", certificates: [certB] });
    idp.during = async () => {
      const current = await prisma().identityProvider.findUniqueOrThrow({ where: { id } });
      await prisma().identityProvider.update({ where: { id }, data: { saml: { ...(current.saml as object), allowSha1: true }, version: { increment: 1 } } });
    };
    const raced = await refreshDueSamlMetadata(ctx, { providerId: id });
    idp.during = null;
    expect(raced).toMatchObject({ refreshed: 0, failed: 1 });
    expect((await api.get<Provider>(`/identity-providers/${id}`)).body.saml).toMatchObject({ allowSha1: true, ssoUrl: "https://idp.example.org/sso3" });
    expect(await refreshDueSamlMetadata(ctx, { providerId: id })).toMatchObject({ refreshed: 1, changed: 1 });
    expect((await api.get<Provider>(`/identity-providers/${id}`)).body.saml).toMatchObject({ allowSha1: true, ssoUrl: "https://idp.example.org/sso4" });

    // A connection entered by hand has no URL to refresh; another kind has no metadata.
    const google = await api.post<Provider>("/identity-providers", { organizationId: org.id, kind: "google", name: "Google", clientId: "g" });
    expect((await api.post(`/identity-providers/${google.body.id}/saml-metadata/refresh`)).status).toBe(409);
  });

  it("refuses hostile metadata with field details and writes nothing", async () => {
    const org = await createOrganization(prisma());
    const good = idpMetadata({ entityId: "https://idp.example.com/e", ssoUrl: "https://idp.example.com/sso", certificates: [certA] });
    const cases: Array<[string, string, string]> = [
      ["DOCTYPE with an external entity", `<?xml version="1.0"?><!DOCTYPE x [<!ENTITY xxe SYSTEM "file:///etc/passwd">]>${good.replace(/^<\?xml[^>]*>/, "").replace("https://idp.example.com/e", "&xxe;")}`, "samlMetadataXml"],
      ["billion laughs", `<!DOCTYPE l [<!ENTITY a "aaaaaaaaaa"><!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;"><!ENTITY c "&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;">]><l>&c;</l>`, "samlMetadataXml"],
      ["huge", good.replace("<md:IDPSSODescriptor", `<!--${"x".repeat(1024 * 1024 + 10)}--><md:IDPSSODescriptor`), "samlMetadataXml"],
      ["deeply nested", `${"<a>".repeat(5000)}${"</a>".repeat(5000)}`, "samlMetadataXml"],
      ["broken XML", good.slice(0, good.length - 30), "samlMetadataXml"],
      ["NUL in a name", good.replace('entityID="https://idp.example.com/e"', 'entityID="https://idp.example.com/\u0000e"'), "samlMetadataXml"],
      ["lone surrogate in a name", good.replace('entityID="https://idp.example.com/e"', 'entityID="https://idp.example.com/\uD800e"'), "samlMetadataXml"],
      ["garbage certificate", good.replace(derOf(certA), "Z2FyYmFnZQ=="), "samlMetadataXml.KeyDescriptor"],
      ["no signing certificate", idpMetadata({ entityId: "https://idp.example.com/e", ssoUrl: "https://idp.example.com/sso", certificates: [] }), "samlMetadataXml.KeyDescriptor"],
    ];
    for (const [label, xml, field] of cases) {
      const res = await api.post<Problem>("/identity-providers", { organizationId: org.id, kind: "saml", name: "Hostile", samlMetadataXml: xml });
      expect(res.status, label).toBe(422);
      expect(fieldsOf(res.body), label).toContain(field);
    }
    // Garbage pasted by hand is named by its position.
    const byHand = await api.post<Problem>("/identity-providers", { organizationId: org.id, kind: "saml", name: "Hostile", issuer: "urn:x", saml: { ssoUrl: "https://idp.example.com/sso", signingCertificates: [certA, "not a certificate"] } });
    expect(byHand.status).toBe(422);
    expect(fieldsOf(byHand.body)).toEqual(["saml.signingCertificates.1"]);
    // An entity ID with a space, a missing SSO URL, two sources at once, OpenID fields.
    const bad = await api.post<Problem>("/identity-providers", { organizationId: org.id, kind: "saml", name: "Hostile", issuer: "has space", clientId: "x", saml: { signingCertificates: [certA] } });
    expect(bad.status).toBe(422);
    expect(fieldsOf(bad.body)).toEqual(expect.arrayContaining(["issuer", "saml.ssoUrl", "clientId"]));
    const none = await api.post<Problem>("/identity-providers", { organizationId: org.id, kind: "saml", name: "Hostile" });
    expect(fieldsOf(none.body)).toEqual(["samlMetadataXml"]);
    expect(await prisma().identityProvider.count({ where: { organizationId: org.id } })).toBe(0);
  });

  it("refuses group roles and an IdP-initiated client outside the organization, and another organization's ids", async () => {
    const org = await createOrganization(prisma());
    const other = await createOrganization(prisma());
    await prisma().role.create({ data: { organizationId: other.id, name: "auditor" } });
    await prisma().role.create({ data: { organizationId: org.id, name: "editor" } });
    const foreignClient = await createClient(prisma(), other.id);
    const base = { organizationId: org.id, kind: "saml", name: "Refs", issuer: "urn:refs", saml: { ssoUrl: "https://idp.example.com/sso", signingCertificates: [certA] } };
    const unknownRole = await api.post<Problem>("/identity-providers", { ...base, saml: { ...base.saml, groupRoles: [{ group: "G", roles: ["editor", "auditor"] }] } });
    expect(unknownRole.status).toBe(422);
    expect((unknownRole.body as Problem).error.details).toEqual([{ field: "saml.groupRoles.0.roles.1", message: "names no role of this organization: auditor" }]);
    const foreign = await api.post<Problem>("/identity-providers", { ...base, saml: { ...base.saml, idpInitiatedClientId: foreignClient.client.id } });
    expect(foreign.status).toBe(422);
    expect(fieldsOf(foreign.body)).toEqual(["saml.idpInitiatedClientId"]);
    // IdP-initiated sign-in needs somewhere to send the browser: the application's sign-in start.
    const ownClient = await createClient(prisma(), org.id);
    const noStart = await api.post<Problem>("/identity-providers", { ...base, saml: { ...base.saml, idpInitiatedClientId: ownClient.client.id } });
    expect(noStart.status).toBe(422);
    expect((noStart.body as Problem).error.details).toEqual([{ field: "saml.idpInitiatedClientId", message: "has no sign-in start address (initiateLoginUri): set one on the client first" }]);

    const created = await api.post<Provider>("/identity-providers", base);
    expect(created.status).toBe(201);
    // The same checks on update, and If-Match.
    const etag = created.headers.get("etag")!;
    const stale = await api.put(`/identity-providers/${created.body.id}`, { saml: { allowSha1: true } }, { "if-match": '"v999"' });
    expect(stale.status).toBe(409);
    const badUpdate = await api.put<Problem>(`/identity-providers/${created.body.id}`, { saml: { groupRoles: [{ group: "G", roles: ["auditor"] }] } }, { "if-match": etag });
    expect(fieldsOf(badUpdate.body)).toEqual(["saml.groupRoles.0.roles.0"]);
    const updated = await api.put<Provider>(`/identity-providers/${created.body.id}`, { issuer: "urn:refs:2", saml: { groupRoles: [{ group: "G", roles: ["editor"] }], allowSha1: true } }, { "if-match": etag });
    expect(updated.status, JSON.stringify(updated.body)).toBe(200);
    expect(updated.body).toMatchObject({ issuer: "urn:refs:2", saml: { allowSha1: true, groupRoles: [{ group: "G", roles: ["editor"] }] } });
    const entry = await prisma().auditEntry.findFirstOrThrow({ where: { targetId: created.body.id, eventType: "identity_provider.updated" } });
    expect(entry.data).toMatchObject({ change: { issuer: "urn:refs:2" } });
    // SAML fields on an OpenID provider are refused.
    const oidc = await api.post<Provider>("/identity-providers", { organizationId: org.id, name: "OIDC", issuer: "https://op.example.com", clientId: "c" });
    const wrongKind = await api.put<Problem>(`/identity-providers/${oidc.body.id}`, { saml: { allowSha1: true } }, { "if-match": oidc.headers.get("etag")! });
    expect(fieldsOf(wrongKind.body)).toEqual(["saml"]);

    // Ids that are no connection's answer 404, on every operation.
    const missing = "018f0000-0000-7000-8000-000000000000";
    expect((await api.get(`/identity-providers/${missing}`)).status).toBe(404);
    expect((await api.post(`/identity-providers/${missing}/saml-metadata/refresh`)).status).toBe(404);
    expect((await api.post("/identity-providers", { ...base, organizationId: missing })).status).toBe(404);
  });

  it("refuses a metadata URL on a private address when the deployment does not allow private networks", async () => {
    const closed = await startTestPorta();
    try {
      const closedApi = adminApi(closed, (await obtainAdminTokens(closed)).accessToken);
      const org = await createOrganization(closed.services.db.prisma);
      idp.status = 200;
      idp.body = idpMetadata({ entityId: "https://idp.example.org/entity", ssoUrl: "https://idp.example.org/sso", certificates: [certA] });
      const before = idp.requests;
      const refused = await closedApi.post<Problem>("/identity-providers", { organizationId: org.id, kind: "saml", name: "Private", samlMetadataUrl: idp.url });
      expect(refused.status).toBe(422);
      expect((refused.body as Problem).error.details).toEqual([{ field: "samlMetadataUrl", message: expect.stringContaining("could not be fetched") }]);
      expect(idp.requests).toBe(before);
    } finally {
      await closed.stop();
    }
  });
});
