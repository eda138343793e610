import { createHash, randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Prisma } from "~/generated/prisma/client";
import { CLIENT_COLUMNS_NOT_CARRIED, IDENTITY_PROVIDER_COLUMNS_NOT_CARRIED, ORGANIZATION_COLUMNS_NOT_CARRIED, USER_COLUMNS_NOT_CARRIED } from "~/.server/admin/transfer/export";
import { createPackageSeal } from "~/.server/admin/transfer/package-seal";
import { clientKeyOf } from "~/.server/federation/providers";
import type { ExportPackage, ImportPlan } from "~/schemas/transfer";
import { adminApi, obtainAdminTokens, type ApiResponse } from "../support/admin-api";
import { createApplication, createClient, createUser, giveRole } from "../support/factories";
import { startTestPorta, type TestPorta } from "../support/porta";
import { enrollTotp, freshTotpCode, openLoginPage, openRecovery, signInWithPassword, submitCode, type Tenant } from "../two-factor/helpers";
import { dataFingerprint, expect422, expectError, PASSWORD, RP_CALLBACK, unique } from "./helpers";
import { resourceFingerprint, withoutPermission } from "./resources";

/**
 * Exports and imports: an organization exported from one Porta and imported into another with
 * a fresh database (same ENCRYPTION_KEY) works there as it did: users sign in with their old
 * passwords, TOTP and recovery codes, clients with their old secrets; a second apply changes
 * nothing; a package that was altered, signed elsewhere or inconsistent is refused whole.
 */
const KEY = randomBytes(32).toString("base64");
/** A 1×1 PNG. */
const LOGO = Buffer.from("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==", "base64");
const LOGO_SHA256 = createHash("sha256").update(LOGO).digest("hex");
let source: TestPorta;
let target: TestPorta;
let sourceApi: ReturnType<typeof adminApi>;
let targetApi: ReturnType<typeof adminApi>;

interface Fixture {
  orgId: string;
  slug: string;
  clientId: string;
  clientSecret: string;
  alice: { email: string };
  bob: { email: string; totpSecret: string; recoveryCodes: string[] };
  carol: { email: string };
}
let fx: Fixture;

/** The client's own settings (decisions 036, 073) travel with it. */
const CLIENT_POLICY = { allowedCorsOrigins: ["https://shop.example.com"], skipConsent: true, pkce: "not_required", accessTokenTtlSeconds: 900, refreshTokenTtlSeconds: 86_400 };

beforeAll(async () => {
  [source, target] = await Promise.all([startTestPorta({ env: { ENCRYPTION_KEY: KEY } }), startTestPorta({ env: { ENCRYPTION_KEY: KEY } })]);
  const sourceToken = (await obtainAdminTokens(source)).accessToken;
  sourceApi = adminApi(source, sourceToken);
  targetApi = adminApi(target, (await obtainAdminTokens(target)).accessToken);

  const prisma = source.services.db.prisma;
  const slug = unique("export");
  const org = await prisma.organization.create({
    data: { slug, name: "Export Ltd", defaultLoginMethods: ["password"], twoFactorPolicy: "optional", defaultLocale: "de", branding: { primaryColor: "#0055aa" } },
  });
  const app = await createApplication(prisma, org.id, { name: "Shop" });
  await prisma.applicationModule.create({ data: { applicationId: app.id, name: "orders", description: "Order desk" } });
  const claim = await prisma.customClaimDefinition.create({ data: { applicationId: app.id, claimName: "tier", claimType: "string", scope: "shop" } });
  const permission = await prisma.permission.create({ data: { organizationId: org.id, name: "orders:read", description: "Read orders" } });
  const { client, secret } = await createClient(prisma, org.id, { redirectUris: [RP_CALLBACK] });
  await prisma.client.update({ where: { id: client.id }, data: { applicationId: app.id, ...CLIENT_POLICY } });

  const alice = await createUser(prisma, org.id, { email: `${unique("alice")}@example.com`, password: PASSWORD, givenName: "Alice" });
  const role = await giveRole(prisma, org.id, alice.id, "clerk");
  await prisma.rolePermission.create({ data: { roleId: role.id, permissionId: permission.id } });
  await prisma.customClaimValue.create({ data: { claimId: claim.id, userId: alice.id, value: "gold" } });
  const bob = await createUser(prisma, org.id, { email: `${unique("bob")}@example.com`, password: PASSWORD, givenName: "Bob" });
  const enrolled = await enrollTotp(source, bob.id);
  const carol = await createUser(prisma, org.id, { email: `${unique("carol")}@example.com`, password: null, status: "inactive" });
  // A logo uploaded through the Admin API becomes the organization's branding logo.
  const upload = await fetch(`${source.url}/api/admin/organizations/${org.id}/branding/assets?kind=logo`, {
    method: "POST",
    headers: { authorization: `Bearer ${sourceToken}`, "content-type": "image/png" },
    body: LOGO,
  });
  if (upload.status !== 201) throw new Error(`logo upload answered ${upload.status}`);

  fx = {
    orgId: org.id,
    slug,
    clientId: client.id,
    clientSecret: secret!.value,
    alice: { email: alice.email },
    bob: { email: bob.email, totpSecret: enrolled.secret, recoveryCodes: enrolled.recoveryCodes },
    carol: { email: carol.email },
  };
});

afterAll(async () => {
  await Promise.all([source?.stop(), target?.stop()]);
});

async function download(): Promise<ApiResponse<ExportPackage>> {
  return sourceApi.get<ExportPackage>(`/organizations/${fx.orgId}/export`);
}

/** The tenant as the target serves it after the import: same slug, client id and secret. */
async function importedTenant(): Promise<Tenant> {
  const org = await target.services.db.prisma.organization.findUniqueOrThrow({ where: { slug: fx.slug } });
  return { org, client: { id: fx.clientId }, secret: fx.clientSecret, issuer: `${target.baseUrl}/${fx.slug}` };
}

/** Target data that an import writes, without the audit trail (every apply records itself). */
async function targetData() {
  const { audit: _a, lastAudit: _l, ...data } = await dataFingerprint(target);
  const { audit: _ra, lastAudit: _rl, ...resources } = await resourceFingerprint(target);
  const prisma = target.services.db.prisma;
  const [totp, codes, usedCodes, secrets, signingKeys] = await Promise.all([
    prisma.totpCredential.findMany({ orderBy: { userId: "asc" }, select: { userId: true, secretEncrypted: true, lastUsedStep: true } }),
    prisma.recoveryCode.count(),
    prisma.recoveryCode.count({ where: { usedAt: { not: null } } }),
    prisma.clientSecret.findMany({ orderBy: { id: "asc" }, select: { secretHash: true, status: true } }),
    prisma.signingKey.findMany({ orderBy: { id: "asc" }, select: { id: true, organizationId: true, status: true } }),
  ]);
  return { data, resources, totp: totp.map((t) => ({ ...t, lastUsedStep: String(t.lastUsedStep) })), codes, usedCodes, secrets, signingKeys };
}

describe("exports", () => {
  it("downloads a signed package with hashes and sealed secrets, and never a plaintext secret", async () => {
    const res = await download();
    expect(res.status).toBe(200);
    expect(res.headers.get("content-disposition")).toBe(`attachment; filename="porta-${fx.slug}-${res.body.exportedAt.slice(0, 10)}.json"`);
    expect(res.headers.get("cache-control")).toBe("no-store");
    const pkg = res.body;
    expect(pkg.format).toBe("porta.organization-export");
    expect(pkg.version).toBe(1);
    expect(pkg.source).toEqual({ issuer: `${source.baseUrl}/${fx.slug}`, organizationId: fx.orgId });
    expect(pkg.signature.alg).toBe("HS256");
    expect(pkg.counts).toEqual({
      applications: 1, modules: 1, claims: 1, permissions: 1, roles: 1, clients: 1, clientSecrets: 1,
      users: 3, usersWithPassword: 2, usersWithTotp: 1, recoveryCodes: 10, claimValues: 1, identityProviders: 0, apiResources: 0, clientResourceGrants: 0,
    });
    expect(pkg.content.organization).toEqual({
      slug: fx.slug,
      name: "Export Ltd",
      defaultLoginMethods: ["password"],
      twoFactorPolicy: "optional",
      defaultLocale: "de",
      oauth21: false,
      botChallenge: "off",
      botChallengeCost: 50_000,
      // Assets travel by content hash with their bytes: database ids mean nothing elsewhere.
      branding: { primaryColor: "#0055aa", logo: { sha256: LOGO_SHA256, contentType: "image/png" } },
      assets: [{ kind: "logo", contentType: "image/png", sha256: LOGO_SHA256, data: LOGO.toString("base64") }],
    });
    const alice = pkg.content.users.find((u) => u.email === fx.alice.email)!;
    expect(alice.passwordHash).toMatch(/^\$argon2id\$/);
    expect(alice.roles).toEqual(["clerk"]);
    expect(alice.claims).toEqual([{ application: "Shop", claimName: "tier", value: "gold" }]);
    expect(pkg.content.roles).toEqual([{ name: "clerk", description: null, permissions: ["orders:read"] }]);
    expect(pkg.content.clients[0]).toMatchObject({ id: fx.clientId, application: "Shop", secrets: [{ status: "active", hint: fx.clientSecret.slice(-4) }] });

    const text = JSON.stringify(pkg);
    for (const plaintext of [PASSWORD, fx.clientSecret, fx.bob.totpSecret, ...fx.bob.recoveryCodes]) expect(text).not.toContain(plaintext);
    const bob = pkg.content.users.find((u) => u.email === fx.bob.email)!;
    expect(bob.totp?.secret).toMatch(/^v1\./);
    expect(bob.recoveryCodes).toHaveLength(10);

    const audit = await source.services.db.prisma.auditEntry.findFirstOrThrow({ where: { eventType: "organization.exported", targetId: fx.orgId } });
    expect(audit.data).toEqual({ counts: pkg.counts });
  });

  it("carries every column of a client, or leaves it out for a stated reason", async () => {
    const [client] = (await download()).body.content.clients;
    const carried = Object.keys(client!);
    for (const column of Object.values(Prisma.ClientScalarFieldEnum)) {
      const reason = (CLIENT_COLUMNS_NOT_CARRIED as Record<string, string>)[column];
      expect(reason === undefined ? carried.includes(column) : !carried.includes(column), `Client.${column}: carry it in the package or list it in CLIENT_COLUMNS_NOT_CARRIED`).toBe(true);
    }
  });

  it("carries every column of a user, or leaves it out for a stated reason", async () => {
    const [user] = (await download()).body.content.users;
    const carried = Object.keys(user!);
    for (const column of Object.values(Prisma.UserScalarFieldEnum)) {
      const reason = (USER_COLUMNS_NOT_CARRIED as Record<string, string>)[column];
      expect(reason === undefined ? carried.includes(column) : !carried.includes(column), `User.${column}: carry it in the package or list it in USER_COLUMNS_NOT_CARRIED`).toBe(true);
    }
  });

  it("carries every column of an organization, or leaves it out for a stated reason", async () => {
    const carried = Object.keys((await download()).body.content.organization);
    for (const column of Object.values(Prisma.OrganizationScalarFieldEnum)) {
      const reason = (ORGANIZATION_COLUMNS_NOT_CARRIED as Record<string, string>)[column];
      expect(reason === undefined ? carried.includes(column) : !carried.includes(column), `Organization.${column}: carry it in the package or list it in ORGANIZATION_COLUMNS_NOT_CARRIED`).toBe(true);
    }
  });

  it("describes an export in a manifest: counts and the signing key's fingerprint", async () => {
    const [manifest, pkg] = [await sourceApi.get<Record<string, unknown>>(`/organizations/${fx.orgId}/export/manifest`), (await download()).body];
    expect(manifest.status).toBe(200);
    expect(manifest.body).toMatchObject({
      format: pkg.format,
      version: pkg.version,
      source: pkg.source,
      organization: { slug: fx.slug, name: "Export Ltd" },
      counts: pkg.counts,
      keyId: pkg.signature.keyId,
    });
  });

  it("answers 404 for an unknown organization, 422 for a malformed id, 403 without admin:export:read", async () => {
    expectError(await sourceApi.get(`/organizations/0190a000-0000-7000-8000-000000000000/export`), 404, "not_found");
    expectError(await sourceApi.get(`/organizations/0190a000-0000-7000-8000-000000000000/export/manifest`), 404, "not_found");
    expect422(await sourceApi.get(`/organizations/not-a-uuid/export`), "path.orgId");
    expect422(await sourceApi.get(`/organizations/${fx.orgId}/export?format=xml`), "query.format");
    await withoutPermission(source, "admin:export:read", async () => {
      expectError(await sourceApi.get(`/organizations/${fx.orgId}/export`), 403, "forbidden");
      expectError(await sourceApi.get(`/organizations/${fx.orgId}/export/manifest`), 403, "forbidden");
    });
  });
});

describe("imports into a fresh database", () => {
  let pkg: ExportPackage;
  beforeAll(async () => {
    pkg = (await download()).body;
  });

  it("previews every creation and writes nothing", async () => {
    const before = await targetData();
    const res = await targetApi.post<ImportPlan>("/imports/preview", { package: pkg });
    expect(res.status).toBe(200);
    expect(res.body.applied).toBe(false);
    expect(res.body.organization).toEqual({ slug: fx.slug, id: null, action: "create" });
    // organization, application, module, claim, permission, role, client, secret, three users
    expect(res.body.summary).toEqual({ create: 11, update: 0, unchanged: 0 });
    expect(res.body.changes).toContainEqual({ type: "user", key: fx.bob.email, action: "create" });
    expect(res.body.changes).toContainEqual({ type: "client", key: fx.clientId, action: "create" });
    // Slugs are case-insensitive: an upper-case target slug is folded, not refused.
    const folded = await targetApi.post<ImportPlan>("/imports/preview", { package: pkg, slug: fx.slug.toUpperCase() });
    expect(folded.status, JSON.stringify(folded.body)).toBe(200);
    expect(folded.body.organization).toEqual({ slug: fx.slug, id: null, action: "create" });
    expect(await targetData()).toEqual(before);
    expect(await target.services.db.prisma.organization.findUnique({ where: { slug: fx.slug } })).toBeNull();
  });

  it("applies the package; users sign in with their old password, TOTP and recovery codes; the client with its old secret", async () => {
    const res = await targetApi.post<ImportPlan & { organizationId: string }>("/imports/apply", { package: pkg });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.applied).toBe(true);
    expect(res.body.summary).toEqual({ create: 11, update: 0, unchanged: 0 });

    const prisma = target.services.db.prisma;
    const org = await prisma.organization.findUniqueOrThrow({ where: { slug: fx.slug } });
    expect(res.body.organizationId).toBe(org.id);
    expect(org).toMatchObject({ name: "Export Ltd", defaultLoginMethods: ["password"], defaultLocale: "de", status: "active" });
    expect(await prisma.client.findUniqueOrThrow({ where: { id: fx.clientId } })).toMatchObject(CLIENT_POLICY);
    const carol = await prisma.user.findFirstOrThrow({ where: { organizationId: org.id, email: fx.carol.email } });
    expect(carol).toMatchObject({ status: "inactive", passwordHash: null });
    const alice = await prisma.user.findFirstOrThrow({
      where: { organizationId: org.id, email: fx.alice.email },
      include: { roles: { include: { role: { include: { permissions: { include: { permission: true } } } } } }, claimValues: true },
    });
    expect(alice.roles.map((r) => [r.role.name, r.role.permissions.map((p) => p.permission.name)])).toEqual([["clerk", ["orders:read"]]]);
    expect(alice.claimValues.map((v) => v.value)).toEqual(["gold"]);
    // The logo arrived and the branding points at the target's copy of it.
    const branding = await targetApi.get<{ logo: { url: string } | null; primaryColor: string }>(`/organizations/${org.id}/branding`);
    expect(branding.body.primaryColor).toBe("#0055aa");
    const logo = await fetch(branding.body.logo!.url);
    expect(logo.status).toBe(200);
    expect(Buffer.from(await logo.arrayBuffer()).equals(LOGO)).toBe(true);
    const audit = await prisma.auditEntry.findFirstOrThrow({ where: { eventType: "organization.imported", targetId: org.id } });
    expect(audit.data).toMatchObject({ summary: { create: 11, update: 0, unchanged: 0 }, source: pkg.source });

    // Signing keys never travel: the organization got a fresh key of its own with the import,
    // so tokens the source issued do not verify here.
    const targetKeys = await prisma.signingKey.findMany({ where: { organizationId: org.id } });
    expect(targetKeys.map((k) => k.status)).toEqual(["active"]);
    expect(await fetch(`${source.baseUrl}/${fx.slug}/.well-known/jwks`).then((r) => r.status)).toBe(200);
    const sourceKids = (await source.services.db.prisma.signingKey.findMany({ where: { organizationId: fx.orgId } })).map((k) => k.id);
    expect(sourceKids).toHaveLength(1);
    expect(sourceKids).not.toContain(targetKeys[0]!.id);
    const packageText = JSON.stringify(pkg);
    for (const kid of sourceKids) expect(packageText).not.toContain(kid);
    expect(packageText).not.toMatch(/privateJwk|"d":/);

    const tenant = await importedTenant();
    // Alice: her old password (the client authenticates with its old secret at the token endpoint).
    const alicePage = await openLoginPage(tenant);
    let step = await signInWithPassword(alicePage, fx.alice.email);
    expect(["consent", "callback"]).toContain(step.kind);

    // Bob: old password, then a code of his old authenticator.
    const bobId = (await prisma.user.findFirstOrThrow({ where: { organizationId: org.id, email: fx.bob.email } })).id;
    const bobPage = await openLoginPage(tenant);
    step = await signInWithPassword(bobPage, fx.bob.email);
    expect(step.kind).toBe("totp");
    const wrong = await submitCode(bobPage.browser, step as Extract<typeof step, { html: string }>, "000000");
    expect(wrong.step).toBeUndefined();
    const right = await submitCode(bobPage.browser, step as Extract<typeof step, { html: string }>, await freshTotpCode(target, bobId, fx.bob.totpSecret));
    expect(["consent", "callback"]).toContain(right.step?.kind);

    // And one of his old recovery codes.
    const again = await openLoginPage(tenant);
    const second = await signInWithPassword(again, fx.bob.email);
    const recovery = await openRecovery(again.browser, second);
    expect(recovery.kind).toBe("recovery");
    const used = await submitCode(again.browser, recovery as Extract<typeof recovery, { html: string }>, fx.bob.recoveryCodes[0]!);
    expect(["consent", "callback"]).toContain(used.step?.kind);

    // The client's old secret works at the token endpoint (client_credentials is not granted: the error is about the grant, not the client).
    const token = await fetch(`${tenant.issuer}/token`, {
      method: "POST",
      headers: { authorization: `Basic ${Buffer.from(`${fx.clientId}:${fx.clientSecret}`).toString("base64")}`, "content-type": "application/x-www-form-urlencoded" },
      body: "grant_type=refresh_token&refresh_token=unknown",
    });
    expect(((await token.json()) as { error: string }).error).toBe("invalid_grant");
  });

  it("applies the same package again without changing anything", async () => {
    const before = await targetData();
    const res = await targetApi.post<ImportPlan>("/imports/apply", { package: pkg });
    expect(res.status).toBe(200);
    expect(res.body.summary).toEqual({ create: 0, update: 0, unchanged: 11 });
    expect(res.body.changes).toEqual([]);
    expect(res.body.organization.action).toBe("unchanged");
    const after = await targetData();
    // The TOTP step and the recovery code used since the import stay used: a package never
    // moves a replay guard back.
    expect(before.usedCodes).toBe(1);
    expect(after).toEqual(before);
  });

  it("previews and applies updates where the target drifted from the package", async () => {
    const prisma = target.services.db.prisma;
    const org = await prisma.organization.findUniqueOrThrow({ where: { slug: fx.slug } });
    await prisma.user.updateMany({ where: { organizationId: org.id, email: fx.alice.email }, data: { givenName: "Alicia" } });
    await prisma.organization.update({ where: { id: org.id }, data: { name: "Renamed", version: { increment: 1 } } });
    const alice = await prisma.user.findFirstOrThrow({ where: { organizationId: org.id, email: fx.alice.email } });
    await prisma.userRole.deleteMany({ where: { userId: alice.id } });

    const preview = await targetApi.post<ImportPlan>("/imports/preview", { package: pkg });
    expect(preview.body.organization).toEqual({ slug: fx.slug, id: org.id, action: "update" });
    expect(preview.body.changes).toEqual([
      { type: "organization", key: fx.slug, action: "update", fields: ["name"] },
      { type: "user", key: fx.alice.email, action: "update", fields: ["givenName", "roles"] },
    ]);
    expect(preview.body.summary).toEqual({ create: 0, update: 2, unchanged: 9 });
    expect((await prisma.organization.findUniqueOrThrow({ where: { id: org.id } })).name).toBe("Renamed");

    const applied = await targetApi.post<ImportPlan>("/imports/apply", { package: pkg });
    expect(applied.body.changes).toEqual(preview.body.changes);
    const restored = await prisma.user.findUniqueOrThrow({ where: { id: alice.id }, include: { roles: { include: { role: true } } } });
    expect(restored.givenName).toBe("Alice");
    expect(restored.version).toBe(alice.version + 1);
    expect(restored.roles.map((r) => r.role.name)).toEqual(["clerk"]);
    expect((await prisma.organization.findUniqueOrThrow({ where: { id: org.id } })).name).toBe("Export Ltd");
  });
});

/** The kid of a private_key_jwt connection's key, read as the deployment that holds it reads it. */
const kidOf = (porta: TestPorta, row: { id: string; clientKeyEncrypted: string | null }) => clientKeyOf(porta.services.encrypter, row)?.kid;

describe("identity providers (decision 055)", () => {
  const SECRET = `upstream-secret-${randomBytes(12).toString("hex")}`;
  let orgId: string;
  let slug: string;
  let exported: ExportPackage;
  beforeAll(async () => {
    slug = unique("federated");
    orgId = (await source.services.db.prisma.organization.create({ data: { slug, name: "Federated Ltd" } })).id;
    const created = await sourceApi.post("/identity-providers", {
      organizationId: orgId,
      name: "Corporate SSO",
      issuer: "https://sso.example.com/realm",
      clientId: "porta-prod",
      clientSecret: SECRET,
      scopes: ["openid", "email"],
      claimMapping: { emailVerified: "xms_edov" },
      domains: ["corp.example.com"],
      createAccounts: true,
      trustUpstreamMfa: "always",
      assumeVerifiedEmails: true,
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const google = await sourceApi.post("/identity-providers", { organizationId: orgId, kind: "google", name: "Google", clientId: "public-pkce", tokenEndpointAuthMethod: "private_key_jwt" });
    expect(google.status, JSON.stringify(google.body)).toBe(201);
    const res = await sourceApi.get<ExportPackage>(`/organizations/${orgId}/export`);
    expect(res.status).toBe(200);
    exported = res.body;
  });

  it("exports every provider's configuration and never its secret", async () => {
    expect(exported.counts.identityProviders).toBe(2);
    expect(exported.content.identityProviders).toEqual([
      {
        name: "Corporate SSO",
        kind: "oidc",
        issuer: "https://sso.example.com/realm",
        clientId: "porta-prod",
        hadClientSecret: true,
        scopes: ["openid", "email"],
        claimMapping: { emailVerified: "xms_edov" },
        domains: ["corp.example.com"],
        enabled: true,
        createAccounts: true,
        trustUpstreamMfa: "always",
        endpoints: null,
        teamId: null,
        keyId: null,
        tokenEndpointAuthMethod: "auto",
        assumeVerifiedEmails: true,
        saml: null,
      },
      expect.objectContaining({ name: "Google", kind: "google", issuer: "https://accounts.google.com", hadClientSecret: false, tokenEndpointAuthMethod: "private_key_jwt" }),
    ]);
    // The connection's private key stays in the deployment (the import makes a new one).
    const keyed = await source.services.db.prisma.identityProvider.findFirstOrThrow({ where: { organizationId: orgId, name: "Google" } });
    expect(keyed.clientKeyEncrypted).not.toBeNull();
    expect(JSON.stringify(exported)).not.toContain(keyed.clientKeyEncrypted!);
    const row = await source.services.db.prisma.identityProvider.findFirstOrThrow({ where: { organizationId: orgId, name: "Corporate SSO" } });
    const text = JSON.stringify(exported);
    expect(text).not.toContain(SECRET);
    expect(text).not.toContain(row.clientSecretEncrypted!);
    const manifest = await sourceApi.get<{ counts: Record<string, number> }>(`/organizations/${orgId}/export/manifest`);
    expect(manifest.body.counts.identityProviders).toBe(2);
  });

  it("carries every column of an identity provider, or leaves it out for a stated reason", () => {
    const carried = Object.keys(exported.content.identityProviders![0]!);
    for (const column of Object.values(Prisma.IdentityProviderScalarFieldEnum)) {
      const reason = (IDENTITY_PROVIDER_COLUMNS_NOT_CARRIED as Record<string, string>)[column];
      expect(reason === undefined ? carried.includes(column) : !carried.includes(column), `IdentityProvider.${column}: carry it in the package or list it in IDENTITY_PROVIDER_COLUMNS_NOT_CARRIED`).toBe(true);
    }
  });

  it("imports them disabled and without a secret; a second apply changes nothing; the target's secret and switch survive an update", async () => {
    const prisma = target.services.db.prisma;
    const applied = await targetApi.post<ImportPlan & { organizationId: string }>("/imports/apply", { package: exported });
    expect(applied.status, JSON.stringify(applied.body)).toBe(200);
    expect(applied.body.changes).toContainEqual({ type: "identityProvider", key: "Corporate SSO", action: "create" });
    const listed = await targetApi.get<{ data: Array<Record<string, unknown>> }>(`/identity-providers?organizationId=${applied.body.organizationId}`);
    const sso = listed.body.data.find((p) => p.name === "Corporate SSO")!;
    expect(sso).toMatchObject({
      kind: "oidc",
      issuer: "https://sso.example.com/realm",
      clientId: "porta-prod",
      hasClientSecret: false,
      enabled: false,
      scopes: ["openid", "email"],
      claimMapping: { emailVerified: "xms_edov" },
      domains: ["corp.example.com"],
      createAccounts: true,
      trustUpstreamMfa: "always",
      assumeVerifiedEmails: true,
      tokenEndpointAuthMethod: "auto",
      callbackUrl: `${target.baseUrl}/${slug}/federation/callback`,
    });
    const google = listed.body.data.find((p) => p.name === "Google")!;
    expect(google).toMatchObject({ enabled: false, hasClientSecret: false, tokenEndpointAuthMethod: "private_key_jwt", jwksUrl: `${target.baseUrl}/${slug}/federation/providers/${String(google.id)}/jwks` });
    // A key of the target's own, to register upstream again.
    const sourceKey = await source.services.db.prisma.identityProvider.findFirstOrThrow({ where: { name: "Google", organization: { slug } } });
    const targetKey = await prisma.identityProvider.findUniqueOrThrow({ where: { id: String(google.id) } });
    expect(targetKey.clientKeyEncrypted).not.toBeNull();
    expect(kidOf(target, targetKey)).not.toBe(kidOf(source, sourceKey));

    // The target's administrator sets the secret and turns the provider on; the same package again changes nothing.
    const etag = (await targetApi.get(`/identity-providers/${String(sso.id)}`)).headers.get("etag")!;
    expect((await targetApi.put(`/identity-providers/${String(sso.id)}`, { clientSecret: "set-here", enabled: true }, { "if-match": etag })).status).toBe(200);
    const again = await targetApi.post<ImportPlan>("/imports/apply", { package: exported });
    expect(again.body.changes).toEqual([]);

    // Drift in the configuration is put back; the secret and the switch stay.
    await prisma.identityProvider.update({ where: { id: String(sso.id) }, data: { scopes: ["openid"], version: { increment: 1 } } });
    const preview = await targetApi.post<ImportPlan>("/imports/preview", { package: exported });
    expect(preview.body.changes).toEqual([{ type: "identityProvider", key: "Corporate SSO", action: "update", fields: ["scopes"] }]);
    expect((await targetApi.post("/imports/apply", { package: exported })).status).toBe(200);
    const after = await targetApi.get<Record<string, unknown>>(`/identity-providers/${String(sso.id)}`);
    expect(after.body).toMatchObject({ scopes: ["openid", "email"], hasClientSecret: true, enabled: true });
  });

  it("refuses a provider whose domain another provider of the target claims, writing nothing", async () => {
    const prisma = target.services.db.prisma;
    const org = await prisma.organization.findUniqueOrThrow({ where: { slug } });
    const sso = await prisma.identityProvider.findFirstOrThrow({ where: { organizationId: org.id, name: "Corporate SSO" } });
    await prisma.identityProvider.update({ where: { id: sso.id }, data: { name: "Renamed SSO" } });
    const res = await targetApi.post("/imports/apply", { package: exported });
    expectError(res, 409, "import_conflict");
    expect((res.body as { error: { details: Array<{ field: string }> } }).error.details.map((d) => d.field)).toEqual(["package.content.identityProviders.0.domains"]);
    expect(await prisma.identityProvider.count({ where: { organizationId: org.id } })).toBe(2);
  });
});

describe("refused packages", () => {
  let pkg: ExportPackage;
  const sign = (unsigned: Omit<ExportPackage, "signature">, key = Buffer.from(KEY, "base64")): ExportPackage => {
    const seal = createPackageSeal(key);
    return { ...unsigned, signature: { alg: "HS256", keyId: seal.keyId, value: seal.sign(unsigned) } };
  };
  const unsignedOf = (p: ExportPackage): Omit<ExportPackage, "signature"> => {
    const { signature: _s, ...rest } = structuredClone(p);
    return rest;
  };
  beforeAll(async () => {
    pkg = (await download()).body;
  });

  async function expectRefused(res: ApiResponse, status: number, field?: string) {
    if (status === 422) expect422(res, field!);
    else expectError(res, status);
  }

  it("refuses an altered package, one signed with another key, and inconsistent ones, writing nothing", async () => {
    const before = await targetData();
    const fingerprint = await dataFingerprint(target);
    const altered = structuredClone(pkg);
    altered.content.users[0]!.givenName = "Mallory";
    const foreign = sign(unsignedOf(pkg), randomBytes(32));
    const badRole = unsignedOf(pkg);
    badRole.content.roles[0]!.permissions.push("orders:delete");
    const badUser = unsignedOf(pkg);
    badUser.content.users[0]!.roles = ["auditor"];
    // A public client always sends PKCE, as the Admin API says (decision 073).
    const badPkce = unsignedOf(pkg);
    Object.assign(badPkce.content.clients[0]!, { tokenEndpointAuthMethod: "none", pkce: "not_required" });
    const cases: Array<[string, unknown, number, string?]> = [
      ["altered", { package: altered }, 422, "package.signature"],
      ["other key", { package: foreign }, 422, "package.signature"],
      ["undefined permission", { package: sign(badRole) }, 422, "package.content.roles.0.permissions.1"],
      ["undefined role", { package: sign(badUser) }, 422, "package.content.users.0.roles.0"],
      ["public client without PKCE", { package: sign(badPkce) }, 422, "package.content.clients.0.pkce"],
      ["no package", {}, 422, "package"],
      ["not an object", { package: "a string" }, 422, "package"],
      ["newer version", { package: { ...pkg, version: 2 } }, 422, "package.version"],
      ["other format", { package: { ...pkg, format: "keycloak-realm" } }, 422, "package.format"],
      ["unknown field", { package: pkg, merge: true }, 422, "merge"],
      ["unknown package field", { package: { ...pkg, extra: 1 } }, 422, "package"],
      ["bad slug", { package: pkg, slug: "Not A Slug!" }, 422, "slug"],
      ["oversize slug", { package: pkg, slug: "x".repeat(5000) }, 422, "slug"],
      ["super-admin slug", { package: pkg, slug: target.services.config.superAdminSlug }, 422, "slug"],
    ];
    for (const path of ["/imports/preview", "/imports/apply"]) {
      for (const [label, body, status, field] of cases) {
        const res = await targetApi.post(path, body);
        await expectRefused(res, status, field).catch((error: Error) => {
          throw new Error(`${path} ${label}: ${error.message}`);
        });
      }
    }
    expect(await targetData()).toEqual(before);
    expect(await dataFingerprint(target)).toEqual(fingerprint);
  });

  it("refuses clients that belong to another organization with 409", async () => {
    // Imported into the source itself under another slug, the client ids are taken by the original.
    const before = await dataFingerprint(source);
    const res = await sourceApi.post("/imports/apply", { package: pkg, slug: unique("copy") });
    expectError(res, 409, "import_conflict");
    expect((res.body as { error: { details: Array<{ field: string }> } }).error.details.map((d) => d.field)).toEqual([
      "package.content.clients.0.id",
      "package.content.clients.0.secrets.0",
    ]);
    expect((res.body as { error: { message: string } }).error.message).toContain("import it as a copy (copy: true)");
    const { audit: _a, lastAudit: _l, ...rest } = await dataFingerprint(source);
    const { audit: _b, lastAudit: _m, ...restBefore } = before;
    expect(rest).toEqual(restBefore);
  });

  it("clones an organization on the same deployment as a copy: its clients get ids of their own and no secret; a second apply changes nothing", async () => {
    const prisma = source.services.db.prisma;
    const original = await prisma.organization.findUniqueOrThrow({ where: { slug: fx.slug }, include: { clients: { include: { secrets: true } } } });
    const slug = unique("clone");
    const preview = await sourceApi.post<{ summary: { create: number } }>("/imports/preview", { package: pkg, slug, copy: true });
    expect(preview.status).toBe(200);
    expect(preview.body.summary.create).toBeGreaterThan(0);
    const res = await sourceApi.post<{ organizationId: string }>("/imports/apply", { package: pkg, slug, copy: true });
    expect(res.status).toBe(200);
    const clone = await prisma.organization.findUniqueOrThrow({ where: { id: res.body.organizationId }, include: { clients: { include: { secrets: true } }, users: true } });
    expect(clone.slug).toBe(slug);
    expect(clone.users.map((u) => u.email).sort()).toEqual(pkg.content.users.map((u) => u.email).sort());
    expect(clone.clients.map((c) => c.name).sort()).toEqual(original.clients.map((c) => c.name).sort());
    for (const client of clone.clients) {
      expect(original.clients.map((c) => c.id)).not.toContain(client.id);
      expect(client.secrets).toEqual([]);
    }
    // The original keeps its clients and their secrets.
    const after = await prisma.organization.findUniqueOrThrow({ where: { id: original.id }, include: { clients: { include: { secrets: true } } } });
    expect(after.clients).toEqual(original.clients);
    const again = await sourceApi.post<{ summary: { create: number; update: number }; changes: unknown[] }>("/imports/apply", { package: pkg, slug, copy: true });
    expect(again.status).toBe(200);
    expect(again.body.changes).toEqual([]);
    expect(again.body.summary).toMatchObject({ create: 0, update: 0 });
  });

  it("needs admin:import:write, and a token", async () => {
    await withoutPermission(target, "admin:import:write", async () => {
      expectError(await targetApi.post("/imports/preview", { package: pkg }), 403, "forbidden");
      expectError(await targetApi.post("/imports/apply", { package: pkg }), 403, "forbidden");
    });
    expectError(await adminApi(target, undefined).post("/imports/apply", { package: pkg }), 401, "unauthorized");
  });
});
