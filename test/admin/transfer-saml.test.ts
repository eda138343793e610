import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ExportPackage, ImportPlan } from "~/schemas/transfer";
import { adminApi, obtainAdminTokens } from "../support/admin-api";
import { createClient } from "../support/factories";
import { startTestPorta, type TestPorta } from "../support/porta";
import { idpCertificate, idpMetadata } from "../support/saml";
import { unique } from "./helpers";

/**
 * SAML connections in export packages (decision 081): the settings travel, the decryption key
 * never does. `hadDecryptionKey` says the connection encrypted; the import makes a new key pair
 * for it (the IdP must be given the new certificate), keeps the target's own on a later apply,
 * and a second apply changes nothing.
 */
const KEY = randomBytes(32).toString("base64");
let source: TestPorta;
let target: TestPorta;
let sourceApi: ReturnType<typeof adminApi>;
let targetApi: ReturnType<typeof adminApi>;

interface Provider {
  id: string;
  name: string;
  kind: string;
  issuer: string;
  enabled: boolean;
  hasClientSecret: boolean;
  saml: Record<string, unknown> & { encryptionCertificate: string | null; signingCertificates: string[] };
}

beforeAll(async () => {
  [source, target] = await Promise.all([startTestPorta({ env: { ENCRYPTION_KEY: KEY } }), startTestPorta({ env: { ENCRYPTION_KEY: KEY } })]);
  sourceApi = adminApi(source, (await obtainAdminTokens(source)).accessToken);
  targetApi = adminApi(target, (await obtainAdminTokens(target)).accessToken);
});
afterAll(async () => {
  await Promise.all([source?.stop(), target?.stop()]);
});

describe("SAML connections in export packages", () => {
  it("carries the settings without the key; the import makes a new key pair, keeps it on the next apply, and changes nothing the second time", async () => {
    const prisma = source.services.db.prisma;
    const slug = unique("saml-export");
    const org = await prisma.organization.create({ data: { slug, name: "SAML Ltd" } });
    await prisma.role.create({ data: { organizationId: org.id, name: "editor" } });
    const { client } = await createClient(prisma, org.id, { initiateLoginUri: "https://rp.example.com/login" });
    const cert = await idpCertificate("idp.saml-ltd.example");
    const encrypted = await sourceApi.post<Provider>("/identity-providers", {
      organizationId: org.id,
      kind: "saml",
      name: "Corp SAML",
      samlMetadataXml: idpMetadata({ entityId: "https://idp.saml-ltd.example/e", ssoUrl: "https://idp.saml-ltd.example/sso", certificates: [cert] }),
      domains: ["saml-ltd.example"],
      claimMapping: { email: "http://schemas.xmlsoap.org/ws/2005/05/identity/claims/emailaddress", groups: "http://schemas.microsoft.com/ws/2008/06/identity/claims/groups" },
      saml: { groupRoles: [{ group: "Editors", roles: ["editor"] }], idpInitiatedClientId: client.id, allowSha1: true, encryption: true },
    });
    expect(encrypted.status, JSON.stringify(encrypted.body)).toBe(201);
    const plain = await sourceApi.post<Provider>("/identity-providers", {
      organizationId: org.id,
      kind: "saml",
      name: "Plain SAML",
      issuer: "urn:plain:idp",
      saml: { ssoUrl: "https://plain.example/sso", signingCertificates: [cert] },
    });
    expect(plain.status).toBe(201);
    const row = await prisma.identityProvider.findUniqueOrThrow({ where: { id: encrypted.body.id } });
    const key = source.services.encrypter.decrypt(row.clientSecretEncrypted!, `identity-provider-secret:${row.id}`);

    const res = await sourceApi.get<ExportPackage>(`/organizations/${org.id}/export`);
    expect(res.status).toBe(200);
    const pkg = res.body;
    const text = JSON.stringify(pkg);
    expect(text).not.toContain(row.clientSecretEncrypted!);
    expect(text).not.toContain(key.split("\n")[1]!);
    expect(text).not.toContain("PRIVATE KEY");
    const carried = pkg.content.identityProviders!.find((p) => p.name === "Corp SAML")!;
    expect(carried).toMatchObject({ kind: "saml", issuer: "https://idp.saml-ltd.example/e", clientId: "", hadClientSecret: false, scopes: [] });
    expect(carried.saml).toMatchObject({ ssoUrl: "https://idp.saml-ltd.example/sso", allowSha1: true, hadDecryptionKey: true, groupRoles: [{ group: "Editors", roles: ["editor"] }], idpInitiatedClientId: client.id });
    expect(carried.saml).not.toHaveProperty("encryptionCertificate");
    expect(pkg.content.identityProviders!.find((p) => p.name === "Plain SAML")!.saml).toMatchObject({ hadDecryptionKey: false });

    const applied = await targetApi.post<ImportPlan & { organizationId: string }>("/imports/apply", { package: pkg });
    expect(applied.status, JSON.stringify(applied.body)).toBe(200);
    const listed = await targetApi.get<{ data: Provider[] }>(`/identity-providers?organizationId=${applied.body.organizationId}`);
    const corp = listed.body.data.find((p) => p.name === "Corp SAML")!;
    expect(corp).toMatchObject({ kind: "saml", issuer: "https://idp.saml-ltd.example/e", enabled: false, hasClientSecret: true });
    const { encryptionCertificate: sourceCert, encryption: _se, entityId: _e1, acsUrl: _a1, spMetadataUrl: _s1, ...sourceSettings } = encrypted.body.saml;
    const { encryptionCertificate: targetCert, encryption: _te, entityId: _e2, acsUrl, spMetadataUrl: _s2, ...targetSettings } = corp.saml;
    expect(targetSettings).toEqual(sourceSettings);
    expect(acsUrl).toBe(`${target.baseUrl}/${slug}/saml/${corp.id}/acs`);
    // A new key pair: its certificate is not the source's, its key decrypts under the target's row.
    expect(targetCert).toContain("BEGIN CERTIFICATE");
    expect(targetCert).not.toBe(sourceCert);
    const targetRow = await target.services.db.prisma.identityProvider.findUniqueOrThrow({ where: { id: corp.id } });
    const targetKey = target.services.encrypter.decrypt(targetRow.clientSecretEncrypted!, `identity-provider-secret:${corp.id}`);
    expect(targetKey).toContain("BEGIN PRIVATE KEY");
    expect(targetKey).not.toBe(key);
    expect(listed.body.data.find((p) => p.name === "Plain SAML")).toMatchObject({ hasClientSecret: false, saml: { encryptionCertificate: null } });

    // The same package again: nothing to do, and the target's key pair stays.
    const again = await targetApi.post<ImportPlan>("/imports/apply", { package: pkg });
    expect(again.body.changes).toEqual([]);

    // Drift in the settings is put back, still with the target's key pair.
    const drifted = { ...(targetRow.saml as Record<string, unknown>), allowSha1: false };
    await target.services.db.prisma.identityProvider.update({ where: { id: corp.id }, data: { saml: drifted, version: { increment: 1 } } });
    const preview = await targetApi.post<ImportPlan>("/imports/preview", { package: pkg });
    expect(preview.body.changes).toEqual([{ type: "identityProvider", key: "Corp SAML", action: "update", fields: ["saml"] }]);
    expect((await targetApi.post("/imports/apply", { package: pkg })).status).toBe(200);
    const after = await targetApi.get<Provider>(`/identity-providers/${corp.id}`);
    expect(after.body.saml).toMatchObject({ allowSha1: true, encryptionCertificate: targetCert });
  });
});
