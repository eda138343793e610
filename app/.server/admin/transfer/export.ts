import { LegacyPasswordSchema } from "~/schemas/legacy-password";
import { totpAad } from "../../auth/two-factor/totp";
import type { Context } from "../../context";
import { notFound } from "../../errors";
import {
  EXPORT_FORMAT,
  EXPORT_VERSION,
  ExportPackageSchema,
  type ExportPackage,
  type PackageContent,
  type PackageCounts,
  type PackageIdentityProvider,
} from "~/schemas/transfer";
import { authMethodOf, claimMappingOf, endpointsOf, trustOf } from "../../federation/providers";
import { portableSamlOf } from "../../federation/saml-connections";
import { scopeDescriptionsOf } from "../api-resources/service";
import { exportBranding } from "./branding-assets";
import { sealedTotpAad } from "./package-seal";

/**
 * Builds the export package of one organization: its settings, applications with modules and
 * claim definitions, permissions, roles, clients with their secrets' hashes, and users with
 * password hashes, roles, claim values, TOTP (sealed) and recovery-code hashes, upstream
 * identity providers without their client secrets (decision 055), and API resources with the
 * clients granted them (decision 077). References
 * between entities are by name (application, role, claim), never by database id, so that a
 * package applies to any database.
 */
const iso = (d: Date | null) => (d ? d.toISOString() : null);

/**
 * The columns of Client a package leaves out, and why; it carries every other one under its own
 * name (test/admin/transfer.test.ts holds both to the schema, so a new column is one or the other).
 */
export const CLIENT_COLUMNS_NOT_CARRIED = {
  organizationId: "the package is the organization's",
  applicationId: "carried as the application's name (`application`), since ids differ between databases",
  version: "belongs to the database the row lives in",
  createdAt: "belongs to the database the row lives in",
  updatedAt: "belongs to the database the row lives in",
  adminApiAccess: "only clients of the super-admin organization may call the Admin API, and imports never write that organization",
  registrationAccessTokenHash: "a self-registered client manages itself at the source (RFC 7592); at the target an administrator manages it",
} as const;

/** The columns of User a package leaves out, and why (held to the schema like the client's). */
export const USER_COLUMNS_NOT_CARRIED = {
  id: "users are matched by email, since ids differ between databases",
  organizationId: "the package is the organization's",
  failedLoginCount: "a lockout in progress belongs to the source's sign-ins, not to the account",
  lockedUntil: "a lockout in progress belongs to the source's sign-ins, not to the account",
  lastLoginAt: "sign-ins happened at the source; statistics there keep them",
  scimExternalId: "it links the account to the source's provisioning client; at the target that client finds the account again by userName (decision 084)",
  version: "belongs to the database the row lives in",
  updatedAt: "belongs to the database the row lives in",
} as const;

/** The columns of Organization a package leaves out, and why. */
export const ORGANIZATION_COLUMNS_NOT_CARRIED = {
  id: "an organization is matched by its slug, since ids differ between databases",
  status: "an import creates or updates an active organization; suspension is the target's decision",
  registrationPolicy: "opening dynamic client registration is the target's decision, as are the initial access tokens it needs",
  version: "belongs to the database the row lives in",
  createdAt: "belongs to the database the row lives in",
  updatedAt: "belongs to the database the row lives in",
} as const;

/** The columns of IdentityProvider a package leaves out, and why (decision 055). */
export const IDENTITY_PROVIDER_COLUMNS_NOT_CARRIED = {
  id: "providers are matched by name, since ids differ between databases",
  organizationId: "the package is the organization's",
  clientSecretEncrypted: "a secret never leaves the deployment: `hadClientSecret` says one must be set after the import; a SAML connection's decryption key, `saml.hadDecryptionKey`, is made anew by the import",
  clientKeyEncrypted: "a private key never leaves the deployment: a private_key_jwt connection gets a new key at the import, to register upstream (decision 082)",
  version: "belongs to the database the row lives in",
  createdAt: "belongs to the database the row lives in",
  updatedAt: "belongs to the database the row lives in",
} as const;

/** The columns of ApiResource a package leaves out, and why (decision 077). */
export const API_RESOURCE_COLUMNS_NOT_CARRIED = {
  id: "resources are matched by identifier, since ids differ between databases",
  organizationId: "the package is the organization's",
  version: "belongs to the database the row lives in",
  createdAt: "belongs to the database the row lives in",
  updatedAt: "belongs to the database the row lives in",
} as const;

/** What an export reads: the database and the keys that seal and sign the package. */
type ExportContext = Context<"packageSeal" | "encrypter" | "config">;

/** The organization an export names; unknown and deleted ones are a 404. */
async function requireOrganization(ctx: Context, organizationId: string) {
  const org = await ctx.db.organization.findUnique({ where: { id: organizationId }, select: { id: true, slug: true, name: true, status: true } });
  if (!org || org.status === "deleted") throw notFound("organization");
  return org;
}

async function loadContent(ctx: ExportContext, organizationId: string): Promise<PackageContent> {
  const prisma = ctx.db;
  const seal = ctx.packageSeal;
  const [org, applications, permissions, roles, clients, users, providers, resources] = await Promise.all([
    prisma.organization.findUniqueOrThrow({ where: { id: organizationId } }),
    prisma.application.findMany({
      where: { organizationId },
      orderBy: { name: "asc" },
      include: { modules: { orderBy: { name: "asc" } }, claims: { orderBy: { claimName: "asc" } } },
    }),
    prisma.permission.findMany({ where: { organizationId }, orderBy: { name: "asc" } }),
    prisma.role.findMany({ where: { organizationId }, orderBy: { name: "asc" }, include: { permissions: { select: { permission: { select: { name: true } } } } } }),
    prisma.client.findMany({
      where: { organizationId },
      orderBy: { id: "asc" },
      include: { application: { select: { name: true } }, secrets: { orderBy: { createdAt: "asc" } } },
    }),
    prisma.user.findMany({
      where: { organizationId },
      orderBy: { email: "asc" },
      include: {
        roles: { select: { role: { select: { name: true } } } },
        claimValues: { select: { value: true, claim: { select: { claimName: true, application: { select: { name: true } } } } } },
        totp: true,
        recoveryCodes: { orderBy: { createdAt: "asc" } },
        passkeys: { orderBy: [{ createdAt: "asc" }, { id: "asc" }] },
      },
    }),
    prisma.identityProvider.findMany({ where: { organizationId }, orderBy: { name: "asc" } }),
    prisma.apiResource.findMany({ where: { organizationId }, orderBy: { identifier: "asc" }, include: { grants: { orderBy: { clientId: "asc" }, select: { clientId: true, scopes: true } } } }),
  ]);
  const branding = await exportBranding(prisma, organizationId, org.branding);
  return {
    organization: {
      slug: org.slug,
      name: org.name,
      defaultLoginMethods: org.defaultLoginMethods as PackageContent["organization"]["defaultLoginMethods"],
      twoFactorPolicy: org.twoFactorPolicy as PackageContent["organization"]["twoFactorPolicy"],
      defaultLocale: org.defaultLocale as PackageContent["organization"]["defaultLocale"],
      oauth21: org.oauth21,
      botChallenge: org.botChallenge as PackageContent["organization"]["botChallenge"],
      botChallengeCost: org.botChallengeCost,
      branding: branding.branding,
      assets: branding.assets,
    },
    applications: applications.map((a) => ({
      name: a.name,
      description: a.description,
      status: a.status as "active" | "inactive",
      modules: a.modules.map((m) => ({ name: m.name, description: m.description, status: m.status as "active" | "inactive" })),
      claims: a.claims.map((c) => ({
        claimName: c.claimName,
        claimType: c.claimType as PackageContent["applications"][number]["claims"][number]["claimType"],
        scope: c.scope,
        description: c.description,
      })),
    })),
    permissions: permissions.map((p) => ({ name: p.name, description: p.description })),
    roles: roles.map((r) => ({ name: r.name, description: r.description, permissions: r.permissions.map((p) => p.permission.name).sort() })),
    clients: clients.map((c) => ({
      id: c.id,
      application: c.application?.name ?? null,
      name: c.name,
      applicationType: c.applicationType as "web" | "native",
      tokenEndpointAuthMethod: c.tokenEndpointAuthMethod as PackageContent["clients"][number]["tokenEndpointAuthMethod"],
      jwks: (c.jwks as PackageContent["clients"][number]["jwks"]) ?? null,
      jwksUri: c.jwksUri,
      redirectUris: c.redirectUris,
      postLogoutRedirectUris: c.postLogoutRedirectUris,
      grantTypes: c.grantTypes as PackageContent["clients"][number]["grantTypes"],
      scope: c.scope,
      loginMethods: c.loginMethods as PackageContent["clients"][number]["loginMethods"],
      allowedCorsOrigins: c.allowedCorsOrigins,
      skipConsent: c.skipConsent,
      pkce: c.pkce as PackageContent["clients"][number]["pkce"],
      accessTokenTtlSeconds: c.accessTokenTtlSeconds,
      refreshTokenTtlSeconds: c.refreshTokenTtlSeconds,
      backchannelLogoutUri: c.backchannelLogoutUri,
      backchannelLogoutSessionRequired: c.backchannelLogoutSessionRequired,
      tokenExchangeAudiences: c.tokenExchangeAudiences,
      initiateLoginUri: c.initiateLoginUri,
      status: c.status as "active" | "inactive",
      secrets: c.secrets.map((s) => ({
        secretHash: s.secretHash,
        hint: s.hint,
        label: s.label,
        status: s.status as "active" | "revoked",
        expiresAt: iso(s.expiresAt),
        revokedAt: iso(s.revokedAt),
        createdAt: s.createdAt.toISOString(),
      })),
    })),
    users: users.map((u) => ({
      email: u.email,
      emailVerified: u.emailVerified,
      givenName: u.givenName,
      familyName: u.familyName,
      locale: u.locale as PackageContent["users"][number]["locale"],
      passwordHash: u.passwordHash,
      legacyPassword: u.legacyPassword === null ? null : LegacyPasswordSchema.parse(u.legacyPassword),
      status: u.status as "active" | "inactive",
      emailOtpEnabled: u.emailOtpEnabled,
      createdAt: u.createdAt.toISOString(),
      roles: u.roles.map((r) => r.role.name).sort(),
      claims: u.claimValues
        .map((v) => ({ application: v.claim.application.name, claimName: v.claim.claimName, value: v.value as PackageContent["users"][number]["claims"][number]["value"] }))
        .sort((a, b) => `${a.application}\u0000${a.claimName}`.localeCompare(`${b.application}\u0000${b.claimName}`)),
      totp: u.totp
        ? {
            // Re-sealed under the package key: the stored ciphertext is bound to this database's user id.
            secret: seal.secrets.encrypt(ctx.encrypter.decrypt(u.totp.secretEncrypted, totpAad(u.id)), sealedTotpAad(u.email)),
            status: u.totp.status as "pending" | "enrolled",
            enrolledAt: iso(u.totp.enrolledAt),
            lastUsedStep: Number(u.totp.lastUsedStep),
          }
        : null,
      recoveryCodes: u.recoveryCodes.map((r) => ({ codeHash: r.codeHash, usedAt: iso(r.usedAt) })),
      passkeys: u.passkeys.map((p) => ({
        credentialId: p.credentialId,
        userHandle: p.userHandle,
        publicKey: Buffer.from(p.publicKey).toString("base64url"),
        counter: Number(p.counter),
        transports: p.transports,
        deviceType: p.deviceType as "singleDevice" | "multiDevice",
        backedUp: p.backedUp,
        aaguid: p.aaguid,
        name: p.name,
        createdAt: p.createdAt.toISOString(),
        lastUsedAt: iso(p.lastUsedAt),
      })),
    })),
    identityProviders: providers.map((p) => ({
      name: p.name,
      kind: p.kind as PackageIdentityProvider["kind"],
      issuer: p.issuer,
      clientId: p.clientId,
      hadClientSecret: p.kind !== "saml" && p.clientSecretEncrypted !== null,
      scopes: p.scopes,
      claimMapping: claimMappingOf(p),
      domains: p.domains,
      enabled: p.enabled,
      createAccounts: p.createAccounts,
      trustUpstreamMfa: trustOf(p),
      endpoints: p.kind === "github" ? endpointsOf(p) : null,
      teamId: p.teamId,
      keyId: p.keyId,
      tokenEndpointAuthMethod: authMethodOf(p),
      assumeVerifiedEmails: p.assumeVerifiedEmails,
      saml: portableSamlOf(p),
    })),
    apiResources: resources.map((r) => ({
      identifier: r.identifier,
      name: r.name,
      scopes: r.scopes,
      scopeDescriptions: scopeDescriptionsOf(r),
      accessTokenTtlSeconds: r.accessTokenTtlSeconds,
      consentRequired: r.consentRequired,
      openToDynamicClients: r.openToDynamicClients,
      status: r.status as "active" | "inactive",
      grants: r.grants.map((g) => ({ client: g.clientId, scopes: g.scopes })),
    })),
  };
}

export function countsOf(content: PackageContent): PackageCounts {
  return {
    applications: content.applications.length,
    modules: content.applications.reduce((n, a) => n + a.modules.length, 0),
    claims: content.applications.reduce((n, a) => n + a.claims.length, 0),
    permissions: content.permissions.length,
    roles: content.roles.length,
    clients: content.clients.length,
    clientSecrets: content.clients.reduce((n, c) => n + c.secrets.length, 0),
    users: content.users.length,
    usersWithPassword: content.users.filter((u) => u.passwordHash !== null).length,
    usersWithTotp: content.users.filter((u) => u.totp !== null).length,
    recoveryCodes: content.users.reduce((n, u) => n + u.recoveryCodes.length, 0),
    claimValues: content.users.reduce((n, u) => n + u.claims.length, 0),
    identityProviders: content.identityProviders?.length ?? 0,
    apiResources: content.apiResources?.length ?? 0,
    clientResourceGrants: content.apiResources?.reduce((n, r) => n + r.grants.length, 0) ?? 0,
  };
}

const issuerOf = (ctx: Context<"config">, slug: string) => `${ctx.config.baseUrl}/${slug}`;

export async function exportOrganization(ctx: ExportContext, organizationId: string): Promise<ExportPackage> {
  await requireOrganization(ctx, organizationId);
  const content = await loadContent(ctx, organizationId);
  const seal = ctx.packageSeal;
  // The package passes through the import's own schema before it is signed, so that the
  // importer, which verifies what that schema returns, checks the very same values.
  const { signature: _unsigned, ...normalized } = ExportPackageSchema.parse({
    format: EXPORT_FORMAT,
    version: EXPORT_VERSION,
    exportedAt: new Date().toISOString(),
    source: { issuer: issuerOf(ctx, content.organization.slug), organizationId },
    counts: countsOf(content),
    content,
    signature: { alg: "HS256", keyId: seal.keyId, value: "" },
  });
  return { ...normalized, signature: { alg: "HS256", keyId: seal.keyId, value: seal.sign(normalized) } };
}

/** What an export of the organization would hold, without the data. */
export async function exportManifest(ctx: Context<"packageSeal" | "config">, organizationId: string) {
  const org = await requireOrganization(ctx, organizationId);
  const prisma = ctx.db;
  const where = { organizationId };
  const [applications, modules, claims, permissions, roles, clients, clientSecrets, users, usersWithPassword, usersWithTotp, recoveryCodes, claimValues, identityProviders, apiResources, clientResourceGrants] = await Promise.all([
    prisma.application.count({ where }),
    prisma.applicationModule.count({ where: { application: where } }),
    prisma.customClaimDefinition.count({ where: { application: where } }),
    prisma.permission.count({ where }),
    prisma.role.count({ where }),
    prisma.client.count({ where }),
    prisma.clientSecret.count({ where: { client: where } }),
    prisma.user.count({ where }),
    prisma.user.count({ where: { ...where, passwordHash: { not: null } } }),
    prisma.totpCredential.count({ where: { user: where } }),
    prisma.recoveryCode.count({ where: { user: where } }),
    prisma.customClaimValue.count({ where: { user: where } }),
    prisma.identityProvider.count({ where }),
    prisma.apiResource.count({ where }),
    prisma.clientResourceGrant.count({ where: { resource: where } }),
  ]);
  return {
    format: EXPORT_FORMAT,
    version: EXPORT_VERSION,
    generatedAt: new Date().toISOString(),
    source: { issuer: issuerOf(ctx, org.slug), organizationId },
    organization: { slug: org.slug, name: org.name },
    counts: { applications, modules, claims, permissions, roles, clients, clientSecrets, users, usersWithPassword, usersWithTotp, recoveryCodes, claimValues, identityProviders, apiResources, clientResourceGrants },
    keyId: ctx.packageSeal.keyId,
  } as const;
}
