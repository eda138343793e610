import type { Prisma } from "~/generated/prisma/client";
import type { PackageContent } from "~/schemas/transfer";
import { authMethodOf } from "../../federation/providers";

/**
 * What an import finds in its target organization, keyed the way packages refer to things:
 * by name, client id and email. Also the clients and secrets of other organizations that the
 * package names, which an import must not take over.
 */
export interface TargetUser {
  id: string;
  emailVerified: boolean;
  givenName: string | null;
  familyName: string | null;
  locale: string | null;
  passwordHash: string | null;
  legacyPassword: unknown;
  status: string;
  emailOtpEnabled: boolean;
  roles: string[];
  claims: Array<{ application: string; claimName: string; value: unknown }>;
  totp: { secretEncrypted: string; status: string; enrolledAt: Date | null; lastUsedStep: bigint } | null;
  recoveryCodes: Array<{ codeHash: string; usedAt: Date | null }>;
  passkeys: Array<{ credentialId: string; publicKey: Uint8Array; counter: bigint; name: string }>;
}

interface TargetClient {
  application: string | null;
  name: string;
  applicationType: string;
  tokenEndpointAuthMethod: string;
  jwks: unknown;
  jwksUri: string | null;
  redirectUris: string[];
  postLogoutRedirectUris: string[];
  grantTypes: string[];
  scope: string;
  loginMethods: string[];
  allowedCorsOrigins: string[];
  skipConsent: boolean;
  pkce: string;
  accessTokenTtlSeconds: number | null;
  refreshTokenTtlSeconds: number | null;
  backchannelLogoutUri: string | null;
  backchannelLogoutSessionRequired: boolean;
  tokenExchangeAudiences: string[];
  initiateLoginUri: string | null;
  status: string;
  secrets: Map<string, { id: string; hint: string; label: string | null; status: string; expiresAt: Date | null; revokedAt: Date | null }>;
}

/** An identity provider as an import compares it (the secret and the enabled switch are the target's own). */
export interface TargetIdentityProvider {
  id: string;
  kind: string;
  issuer: string;
  clientId: string;
  scopes: string[];
  claimMapping: unknown;
  domains: string[];
  createAccounts: boolean;
  trustUpstreamMfa: string;
  endpoints: unknown;
  /** A SAML connection's settings (decision 081) and whether it holds a decryption key. */
  saml: Prisma.JsonValue;
  clientSecretEncrypted: string | null;
  teamId: string | null;
  keyId: string | null;
  /** "auto" for a stored null (decision 082). */
  tokenEndpointAuthMethod: string;
  clientKeyEncrypted: string | null;
  assumeVerifiedEmails: boolean;
}

/** An API resource as an import compares it: grants sorted by client id. */
export interface TargetApiResource {
  id: string;
  name: string;
  scopes: string[];
  scopeDescriptions: unknown;
  accessTokenTtlSeconds: number | null;
  consentRequired: boolean;
  openToDynamicClients: boolean;
  status: string;
  grants: Array<{ client: string; scopes: string[] }>;
}

export interface TargetState {
  org: { id: string; name: string; defaultLoginMethods: string[]; twoFactorPolicy: string; defaultLocale: string; oauth21: boolean; botChallenge: string; botChallengeCost: number; branding: unknown } | null;
  deleted: boolean;
  permissions: Map<string, { id: string; description: string | null }>;
  roles: Map<string, { id: string; description: string | null; permissions: string[] }>;
  applications: Map<
    string,
    {
      id: string;
      description: string | null;
      status: string;
      modules: Map<string, { id: string; description: string | null; status: string }>;
      claims: Map<string, { id: string; claimType: string; scope: string; description: string | null }>;
    }
  >;
  clients: Map<string, TargetClient>;
  users: Map<string, TargetUser>;
  identityProviders: Map<string, TargetIdentityProvider>;
  apiResources: Map<string, TargetApiResource>;
  foreignClientIds: Set<string>;
  foreignSecretHashes: Set<string>;
}

export async function loadTarget(db: Prisma.TransactionClient, slug: string, content: PackageContent): Promise<TargetState> {
  const org = await db.organization.findUnique({ where: { slug } });
  const clientIds = content.clients.map((c) => c.id);
  const secretHashes = content.clients.flatMap((c) => c.secrets.map((s) => s.secretHash));
  const [foreignClients, foreignSecrets] = await Promise.all([
    db.client.findMany({ where: { id: { in: clientIds }, ...(org ? { organizationId: { not: org.id } } : {}) }, select: { id: true } }),
    db.clientSecret.findMany({
      where: { secretHash: { in: secretHashes }, ...(org ? { client: { organizationId: { not: org.id } } } : {}) },
      select: { secretHash: true, clientId: true },
    }),
  ]);
  const packageSecretOwner = new Map(content.clients.flatMap((c) => c.secrets.map((s) => [s.secretHash, c.id] as const)));
  const state: TargetState = {
    org: null,
    deleted: org?.status === "deleted",
    permissions: new Map(),
    roles: new Map(),
    applications: new Map(),
    clients: new Map(),
    users: new Map(),
    identityProviders: new Map(),
    apiResources: new Map(),
    foreignClientIds: new Set(foreignClients.map((c) => c.id)),
    // A secret stored for a different client than the package gives it to is taken elsewhere.
    foreignSecretHashes: new Set(foreignSecrets.filter((s) => !org || packageSecretOwner.get(s.secretHash) !== s.clientId).map((s) => s.secretHash)),
  };
  if (!org || state.deleted) return state;
  state.org = org;
  const organizationId = org.id;
  const [permissions, roles, applications, clients, users, ownSecrets, providers, resources] = await Promise.all([
    db.permission.findMany({ where: { organizationId } }),
    db.role.findMany({ where: { organizationId }, include: { permissions: { select: { permission: { select: { name: true } } } } } }),
    db.application.findMany({ where: { organizationId }, include: { modules: true, claims: true } }),
    db.client.findMany({ where: { organizationId }, include: { application: { select: { name: true } }, secrets: true } }),
    db.user.findMany({
      where: { organizationId },
      include: {
        roles: { select: { role: { select: { name: true } } } },
        claimValues: { select: { value: true, claim: { select: { claimName: true, application: { select: { name: true } } } } } },
        totp: true,
        recoveryCodes: { select: { codeHash: true, usedAt: true } },
        passkeys: { select: { credentialId: true, publicKey: true, counter: true, name: true } },
      },
    }),
    db.clientSecret.findMany({ where: { secretHash: { in: secretHashes }, client: { organizationId } }, select: { secretHash: true, clientId: true } }),
    db.identityProvider.findMany({
      where: { organizationId },
      select: { id: true, name: true, kind: true, issuer: true, clientId: true, scopes: true, claimMapping: true, domains: true, createAccounts: true, trustUpstreamMfa: true, endpoints: true, teamId: true, keyId: true, tokenEndpointAuthMethod: true, clientKeyEncrypted: true, assumeVerifiedEmails: true, saml: true, clientSecretEncrypted: true },
    }),
    db.apiResource.findMany({ where: { organizationId }, include: { grants: { orderBy: { clientId: "asc" }, select: { clientId: true, scopes: true } } } }),
  ]);
  for (const r of resources) {
    state.apiResources.set(r.identifier, {
      id: r.id,
      name: r.name,
      scopes: r.scopes,
      scopeDescriptions: r.scopeDescriptions,
      accessTokenTtlSeconds: r.accessTokenTtlSeconds,
      consentRequired: r.consentRequired,
      openToDynamicClients: r.openToDynamicClients,
      status: r.status,
      grants: r.grants.map((g) => ({ client: g.clientId, scopes: g.scopes })),
    });
  }
  for (const { name, ...provider } of providers) state.identityProviders.set(name, { ...provider, tokenEndpointAuthMethod: authMethodOf(provider) });
  for (const s of ownSecrets) if (packageSecretOwner.get(s.secretHash) !== s.clientId) state.foreignSecretHashes.add(s.secretHash);
  for (const p of permissions) state.permissions.set(p.name, { id: p.id, description: p.description });
  for (const r of roles) state.roles.set(r.name, { id: r.id, description: r.description, permissions: r.permissions.map((p) => p.permission.name) });
  for (const a of applications) {
    state.applications.set(a.name, {
      id: a.id,
      description: a.description,
      status: a.status,
      modules: new Map(a.modules.map((m) => [m.name, { id: m.id, description: m.description, status: m.status }])),
      claims: new Map(a.claims.map((c) => [c.claimName, { id: c.id, claimType: c.claimType, scope: c.scope, description: c.description }])),
    });
  }
  for (const c of clients) {
    state.clients.set(c.id, {
      application: c.application?.name ?? null,
      name: c.name,
      applicationType: c.applicationType,
      tokenEndpointAuthMethod: c.tokenEndpointAuthMethod,
      jwks: c.jwks,
      jwksUri: c.jwksUri,
      redirectUris: c.redirectUris,
      postLogoutRedirectUris: c.postLogoutRedirectUris,
      grantTypes: c.grantTypes,
      scope: c.scope,
      loginMethods: c.loginMethods,
      allowedCorsOrigins: c.allowedCorsOrigins,
      skipConsent: c.skipConsent,
      pkce: c.pkce,
      accessTokenTtlSeconds: c.accessTokenTtlSeconds,
      refreshTokenTtlSeconds: c.refreshTokenTtlSeconds,
      backchannelLogoutUri: c.backchannelLogoutUri,
      backchannelLogoutSessionRequired: c.backchannelLogoutSessionRequired,
      tokenExchangeAudiences: c.tokenExchangeAudiences,
      initiateLoginUri: c.initiateLoginUri,
      status: c.status,
      secrets: new Map(c.secrets.map((s) => [s.secretHash, { id: s.id, hint: s.hint, label: s.label, status: s.status, expiresAt: s.expiresAt, revokedAt: s.revokedAt }])),
    });
  }
  for (const u of users) {
    state.users.set(u.email.toLowerCase(), {
      id: u.id,
      emailVerified: u.emailVerified,
      givenName: u.givenName,
      familyName: u.familyName,
      locale: u.locale,
      passwordHash: u.passwordHash,
      legacyPassword: u.legacyPassword,
      status: u.status,
      emailOtpEnabled: u.emailOtpEnabled,
      roles: u.roles.map((r) => r.role.name),
      claims: u.claimValues.map((v) => ({ application: v.claim.application.name, claimName: v.claim.claimName, value: v.value })),
      totp: u.totp ? { secretEncrypted: u.totp.secretEncrypted, status: u.totp.status, enrolledAt: u.totp.enrolledAt, lastUsedStep: u.totp.lastUsedStep } : null,
      recoveryCodes: u.recoveryCodes,
      passkeys: u.passkeys,
    });
  }
  return state;
}
