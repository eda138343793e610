import { Prisma } from "~/generated/prisma/client";
import { totpAad } from "../../auth/two-factor/totp";
import { invalidateClient } from "../../directory/clients";
import { invalidateOrganization } from "../../directory/organizations";
import { invalidateUser } from "../../directory/users";
import { storedAuthMethod } from "../../federation/providers";
import type { Context } from "../../context";
import { conflict, validation, type FieldDetail } from "../../errors";
import { adminApiResource } from "../api-access";
import { ensureOrganizationRoles } from "../organization-roles";
import type { ExportPackage, ImportChange, ImportPlan, PackageApiResource, PackageClient, PackageContent, PackageIdentityProvider, PackageUser } from "~/schemas/transfer";
import { NEW_ORGANIZATION_DEFAULTS } from "~/schemas/organization";
import { assetProblems, materializeBranding, portableBranding } from "./branding-assets";
import { encryptProviderSecret } from "../../federation/providers";
import { importedSamlSettings, portableSamlOf } from "../../federation/saml-connections";
import { asCopy } from "./copy";
import { canonicalJson, sealedTotpAad } from "./package-seal";
import { loadTarget, type TargetState, type TargetUser } from "./target-state";

/**
 * Imports an export package into the organization with the package's slug (or the slug the
 * request names): creates what is missing and updates what differs, matching entities by
 * their natural keys (application, role, permission and claim names, client ids, user emails).
 * Nothing is ever deleted, except that a user named in the package gets exactly the roles,
 * claim values, TOTP and recovery codes the package gives them. Identity providers (matched by
 * name) arrive without a secret and disabled; an existing one keeps its secret and its switch. API
 * resources (matched by identifier) get exactly the client grants the package gives them. Preview and apply share one
 * plan; apply runs it in one transaction, so a second apply finds everything unchanged.
 */
type Json = Prisma.InputJsonValue;
const same = (a: unknown, b: unknown) => canonicalJson(a) === canonicalJson(b);
const iso = (d: Date | null | undefined) => (d ? d.toISOString() : null);
const date = (s: string | null) => (s ? new Date(s) : null);

function changedFields<T extends object>(wanted: T, existing: object, fields: Array<keyof T & string>): string[] {
  return fields.filter((f) => !same(wanted[f], (existing as Record<string, unknown>)[f]));
}

/** The signature, then the references inside the package; any failure is a 422 naming the field. */
function verifyPackage(ctx: Context<"packageSeal">, pkg: ExportPackage) {
  const seal = ctx.packageSeal;
  const { signature, ...unsigned } = pkg;
  if (signature.keyId !== seal.keyId) {
    throw validation([{ field: "package.signature", message: "was made by a Porta with a different ENCRYPTION_KEY: import it where the key is the same" }]);
  }
  if (!seal.verify(unsigned, signature.value)) {
    throw validation([{ field: "package.signature", message: "does not match the package: it was changed after export" }]);
  }
  const c = pkg.content;
  const details: FieldDetail[] = assetProblems(c.organization);
  const apps = new Map(c.applications.map((a) => [a.name, new Set(a.claims.map((cl) => cl.claimName))]));
  const permissions = new Set(c.permissions.map((p) => p.name));
  const roles = new Set(c.roles.map((r) => r.name));
  c.roles.forEach((r, i) => r.permissions.forEach((p, j) => permissions.has(p) || details.push({ field: `package.content.roles.${i}.permissions.${j}`, message: `names the permission ${p}, which the package does not define` })));
  c.clients.forEach((cl, i) => cl.application === null || apps.has(cl.application) || details.push({ field: `package.content.clients.${i}.application`, message: "names an application the package does not define" }));
  c.users.forEach((u, i) => {
    u.roles.forEach((r, j) => roles.has(r) || details.push({ field: `package.content.users.${i}.roles.${j}`, message: `names the role ${r}, which the package does not define` }));
    u.claims.forEach((v, j) => apps.get(v.application)?.has(v.claimName) || details.push({ field: `package.content.users.${i}.claims.${j}`, message: "names a claim the package does not define" }));
    if (u.totp) {
      try {
        seal.secrets.decrypt(u.totp.secret, sealedTotpAad(u.email));
      } catch {
        details.push({ field: `package.content.users.${i}.totp.secret`, message: "cannot be opened with this deployment's key" });
      }
    }
  });
  const clientIds = new Set(c.clients.map((cl) => cl.id));
  (c.apiResources ?? []).forEach((r, i) => {
    const defined = new Set(r.scopes);
    Object.keys(r.scopeDescriptions).forEach((scope) => defined.has(scope) || details.push({ field: `package.content.apiResources.${i}.scopeDescriptions.${scope}`, message: "describes a scope the resource does not define" }));
    r.grants.forEach((g, j) => {
      if (!clientIds.has(g.client)) details.push({ field: `package.content.apiResources.${i}.grants.${j}.client`, message: "names a client the package does not define" });
      g.scopes.forEach((scope, k) => defined.has(scope) || details.push({ field: `package.content.apiResources.${i}.grants.${j}.scopes.${k}`, message: `names the scope ${scope}, which the resource does not define` }));
    });
  });
  if (details.length > 0) throw validation(details.slice(0, 100), "The package refers to things it does not contain.");
  return seal;
}

interface Planned {
  plan: ImportPlan;
  apply(tx: Prisma.TransactionClient): Promise<{ organizationId: string; clients: string[]; users: string[] }>;
}

/** What a preview needs; applying also invalidates caches and the organization's provider. */
type PreviewContext = Context<"packageSeal" | "encrypter" | "config" | "keys">;

function planImport(ctx: PreviewContext, pkg: ExportPackage, slug: string, target: TargetState): Planned {
  const seal = ctx.packageSeal;
  const c = pkg.content;
  const changes: ImportChange[] = [];
  let unchanged = 0;
  const note = (type: ImportChange["type"], key: string, fields: string[] | null): boolean => {
    if (fields === null) changes.push({ type, key, action: "create" });
    else if (fields.length > 0) changes.push({ type, key, action: "update", fields });
    else unchanged++;
    return fields === null || fields.length > 0;
  };
  const orgData = {
    name: c.organization.name,
    defaultLoginMethods: c.organization.defaultLoginMethods,
    twoFactorPolicy: c.organization.twoFactorPolicy,
    defaultLocale: c.organization.defaultLocale,
    oauth21: c.organization.oauth21 ?? false,
    botChallenge: c.organization.botChallenge ?? NEW_ORGANIZATION_DEFAULTS.botChallenge,
    botChallengeCost: c.organization.botChallengeCost ?? NEW_ORGANIZATION_DEFAULTS.botChallengeCost,
    branding: c.organization.branding,
  };
  const orgFields = target.org
    ? changedFields(orgData, { ...target.org, branding: portableBranding(target.org.branding) }, ["name", "defaultLoginMethods", "twoFactorPolicy", "defaultLocale", "oauth21", "botChallenge", "botChallengeCost", "branding"])
    : null;
  const orgAction = orgFields === null ? "create" : orgFields.length > 0 ? "update" : "unchanged";
  note("organization", slug, orgFields);

  const permissionSteps = c.permissions.map((p) => {
    const existing = target.permissions.get(p.name);
    return { p, existing, write: note("permission", p.name, existing ? changedFields(p, existing, ["description"]) : null) };
  });
  const roleSteps = c.roles.map((r) => {
    const existing = target.roles.get(r.name);
    const wanted = { ...r, permissions: [...r.permissions].sort() };
    return { r: wanted, existing, write: note("role", r.name, existing ? changedFields(wanted, { ...existing, permissions: [...existing.permissions].sort() }, ["description", "permissions"]) : null) };
  });
  const appSteps = c.applications.map((a) => {
    const existing = target.applications.get(a.name);
    const write = note("application", a.name, existing ? changedFields(a, existing, ["description", "status"]) : null);
    const modules = a.modules.map((m) => {
      const em = existing?.modules.get(m.name);
      return { m, existing: em, write: note("module", `${a.name}/${m.name}`, em ? changedFields(m, em, ["description", "status"]) : null) };
    });
    const claims = a.claims.map((cl) => {
      const ec = existing?.claims.get(cl.claimName);
      return { cl, existing: ec, write: note("claim", `${a.name}/${cl.claimName}`, ec ? changedFields(cl, ec, ["claimType", "scope", "description"]) : null) };
    });
    return { a, existing, write, modules, claims };
  });
  const clientSteps = c.clients.map((cl) => {
    const existing = target.clients.get(cl.id);
    const fields: Array<keyof PackageClient & string> = ["application", "name", "applicationType", "tokenEndpointAuthMethod", "jwks", "jwksUri", "redirectUris", "postLogoutRedirectUris", "grantTypes", "scope", "loginMethods", "allowedCorsOrigins", "skipConsent", "pkce", "accessTokenTtlSeconds", "refreshTokenTtlSeconds", "backchannelLogoutUri", "backchannelLogoutSessionRequired", "tokenExchangeAudiences", "initiateLoginUri", "status"];
    const write = note("client", cl.id, existing ? changedFields(cl, existing, fields) : null);
    const secrets = cl.secrets.map((s) => {
      const es = existing?.secrets.get(s.secretHash);
      const current = es ? { hint: es.hint, label: es.label, status: es.status, expiresAt: iso(es.expiresAt), revokedAt: iso(es.revokedAt) } : null;
      return { s, existing: es, write: note("clientSecret", `${cl.id}/…${s.hint}`, current ? changedFields(s, current, ["hint", "label", "status", "expiresAt", "revokedAt"]) : null) };
    });
    return { cl, existing, write, secrets };
  });
  const userSteps = c.users.map((u) => {
    const existing = target.users.get(u.email);
    const totpSecret = u.totp ? seal.secrets.decrypt(u.totp.secret, sealedTotpAad(u.email)) : null;
    const fields = existing ? userChanges(ctx, u, totpSecret, existing) : null;
    return { u, existing, totpSecret, write: note("user", u.email, fields), fields: fields ?? [] };
  });

  const providerFields: Array<keyof PackageIdentityProvider & string> = ["kind", "issuer", "clientId", "scopes", "claimMapping", "domains", "createAccounts", "trustUpstreamMfa", "endpoints", "teamId", "keyId", "tokenEndpointAuthMethod", "assumeVerifiedEmails", "saml"];
  const providerSteps = (c.identityProviders ?? []).map((given) => {
    const p = {
      ...given,
      endpoints: given.endpoints ?? null,
      teamId: given.teamId ?? null,
      keyId: given.keyId ?? null,
      tokenEndpointAuthMethod: given.tokenEndpointAuthMethod ?? "auto",
      assumeVerifiedEmails: given.assumeVerifiedEmails ?? false,
      saml: given.saml ?? null,
    };
    const existing = target.identityProviders.get(p.name);
    // A SAML connection is compared as packages carry it (its key pair is the target's own).
    const comparable = existing ? { ...existing, saml: portableSamlOf({ kind: existing.kind, saml: existing.saml, clientSecretEncrypted: existing.clientSecretEncrypted }) } : null;
    return { p, existing, write: note("identityProvider", p.name, comparable ? changedFields(p, comparable, providerFields) : null) };
  });

  const grantsOf = (grants: ReadonlyArray<{ client: string; scopes: string[] }>) => [...grants].sort((a, b) => (a.client < b.client ? -1 : a.client > b.client ? 1 : 0));
  const resourceFields: Array<keyof PackageApiResource & string> = ["name", "scopes", "scopeDescriptions", "accessTokenTtlSeconds", "consentRequired", "openToDynamicClients", "status", "grants"];
  const resourceSteps = (c.apiResources ?? []).map((given) => {
    const r = { ...given, grants: grantsOf(given.grants) };
    const existing = target.apiResources.get(r.identifier);
    return { r, existing, write: note("apiResource", r.identifier, existing ? changedFields(r, { ...existing, grants: grantsOf(existing.grants) }, resourceFields) : null) };
  });

  const plan: ImportPlan = {
    organization: { slug, id: target.org?.id ?? null, action: orgAction },
    summary: { create: changes.filter((x) => x.action === "create").length, update: changes.filter((x) => x.action === "update").length, unchanged },
    changes,
    applied: false,
  };

  async function apply(tx: Prisma.TransactionClient) {
    const organizationId = target.org?.id ?? (await tx.organization.create({ data: { slug, ...orgData, branding: {} } })).id;
    // Packages carry no signing keys (decision 016): a new organization gets a fresh one here.
    if (!target.org) await ctx.keys.ensureActiveKeyIn(tx, organizationId);
    if (orgFields === null || orgFields.length > 0) {
      const branding = await materializeBranding(tx, organizationId, c.organization);
      await tx.organization.update({ where: { id: organizationId }, data: { ...orgData, branding, ...(target.org ? { version: { increment: 1 } } : {}) } });
    }

    const permissionIds = new Map([...target.permissions].map(([name, p]) => [name, p.id]));
    for (const { p, existing, write } of permissionSteps) {
      if (!write) continue;
      if (existing) await tx.permission.update({ where: { id: existing.id }, data: { description: p.description } });
      else permissionIds.set(p.name, (await tx.permission.create({ data: { organizationId, name: p.name, description: p.description } })).id);
    }
    const roleIds = new Map([...target.roles].map(([name, r]) => [name, r.id]));
    for (const { r, existing, write } of roleSteps) {
      if (!write) continue;
      const id = existing
        ? (await tx.role.update({ where: { id: existing.id }, data: { description: r.description, version: { increment: 1 } } })).id
        : (await tx.role.create({ data: { organizationId, name: r.name, description: r.description } })).id;
      roleIds.set(r.name, id);
      await tx.rolePermission.deleteMany({ where: { roleId: id } });
      await tx.rolePermission.createMany({ data: r.permissions.map((name) => ({ roleId: id, permissionId: permissionIds.get(name)! })) });
    }
    // After the package's roles: a package from an organization that has them carries them too.
    await ensureOrganizationRoles(tx, organizationId);
    const appIds = new Map([...target.applications].map(([name, a]) => [name, a.id]));
    const claimIds = new Map<string, string>();
    for (const [name, a] of target.applications) for (const [claimName, cl] of a.claims) claimIds.set(`${name}\u0000${claimName}`, cl.id);
    for (const { a, existing, write, modules, claims } of appSteps) {
      let appId = existing?.id;
      if (write) {
        appId = existing
          ? (await tx.application.update({ where: { id: existing.id }, data: { description: a.description, status: a.status, version: { increment: 1 } } })).id
          : (await tx.application.create({ data: { organizationId, name: a.name, description: a.description, status: a.status } })).id;
        appIds.set(a.name, appId);
      }
      for (const { m, existing: em, write: mw } of modules) {
        if (!mw) continue;
        if (em) await tx.applicationModule.update({ where: { id: em.id }, data: { description: m.description, status: m.status } });
        else await tx.applicationModule.create({ data: { applicationId: appId!, name: m.name, description: m.description, status: m.status } });
      }
      for (const { cl, existing: ec, write: cw } of claims) {
        if (!cw) continue;
        const data = { claimType: cl.claimType, scope: cl.scope, description: cl.description };
        const id = ec ? (await tx.customClaimDefinition.update({ where: { id: ec.id }, data })).id : (await tx.customClaimDefinition.create({ data: { applicationId: appId!, claimName: cl.claimName, ...data } })).id;
        claimIds.set(`${a.name}\u0000${cl.claimName}`, id);
      }
    }
    const touchedClients: string[] = [];
    for (const { cl, existing, write, secrets } of clientSteps) {
      const data = {
        applicationId: cl.application === null ? null : appIds.get(cl.application)!,
        name: cl.name,
        applicationType: cl.applicationType,
        tokenEndpointAuthMethod: cl.tokenEndpointAuthMethod,
        jwks: cl.jwks ?? Prisma.DbNull,
        jwksUri: cl.jwksUri,
        redirectUris: cl.redirectUris,
        postLogoutRedirectUris: cl.postLogoutRedirectUris,
        grantTypes: cl.grantTypes,
        scope: cl.scope,
        loginMethods: cl.loginMethods,
        allowedCorsOrigins: cl.allowedCorsOrigins,
        skipConsent: cl.skipConsent,
        pkce: cl.pkce,
        accessTokenTtlSeconds: cl.accessTokenTtlSeconds,
        refreshTokenTtlSeconds: cl.refreshTokenTtlSeconds,
        backchannelLogoutUri: cl.backchannelLogoutUri,
        backchannelLogoutSessionRequired: cl.backchannelLogoutSessionRequired,
        tokenExchangeAudiences: cl.tokenExchangeAudiences,
        initiateLoginUri: cl.initiateLoginUri,
        status: cl.status,
      };
      if (write) {
        if (existing) await tx.client.update({ where: { id: cl.id }, data: { ...data, version: { increment: 1 } } });
        else await tx.client.create({ data: { id: cl.id, organizationId, ...data } });
      }
      for (const { s, existing: es, write: sw } of secrets) {
        if (!sw) continue;
        const secret = { hint: s.hint, label: s.label, status: s.status, expiresAt: date(s.expiresAt), revokedAt: date(s.revokedAt) };
        if (es) await tx.clientSecret.update({ where: { id: es.id }, data: secret });
        else await tx.clientSecret.create({ data: { clientId: cl.id, secretHash: s.secretHash, createdAt: new Date(s.createdAt), ...secret } });
      }
      if (write || secrets.some((s) => s.write)) touchedClients.push(cl.id);
    }
    const touchedUsers: string[] = [];
    for (const { u, existing, totpSecret, write, fields } of userSteps) {
      if (!write) continue;
      const data = {
        emailVerified: u.emailVerified,
        givenName: u.givenName,
        familyName: u.familyName,
        locale: u.locale,
        passwordHash: u.passwordHash,
        legacyPassword: u.legacyPassword ?? Prisma.DbNull,
        status: u.status,
        emailOtpEnabled: u.emailOtpEnabled,
      };
      const userId = existing
        ? (await tx.user.update({ where: { id: existing.id }, data: { ...data, version: { increment: 1 } } })).id
        : (await tx.user.create({ data: { organizationId, email: u.email, createdAt: new Date(u.createdAt), ...data } })).id;
      touchedUsers.push(userId);
      const all = !existing;
      if (all || fields.includes("roles")) {
        await tx.userRole.deleteMany({ where: { userId } });
        await tx.userRole.createMany({ data: u.roles.map((name) => ({ userId, roleId: roleIds.get(name)! })) });
      }
      if (all || fields.includes("claims")) {
        await tx.customClaimValue.deleteMany({ where: { userId } });
        await tx.customClaimValue.createMany({ data: u.claims.map((v) => ({ userId, claimId: claimIds.get(`${v.application}\u0000${v.claimName}`)!, value: v.value as Json })) });
      }
      if (all || fields.includes("totp")) {
        await tx.totpCredential.deleteMany({ where: { userId } });
        if (u.totp && totpSecret !== null) {
          await tx.totpCredential.create({
            data: {
              userId,
              secretEncrypted: ctx.encrypter.encrypt(totpSecret, totpAad(userId)),
              status: u.totp.status,
              enrolledAt: date(u.totp.enrolledAt),
              lastUsedStep: BigInt(Math.max(u.totp.lastUsedStep, Number(existing?.totp?.lastUsedStep ?? 0))),
            },
          });
        }
      }
      if (all || fields.includes("recoveryCodes")) {
        const usedHere = new Map((existing?.recoveryCodes ?? []).filter((r) => r.usedAt).map((r) => [r.codeHash, r.usedAt]));
        await tx.recoveryCode.deleteMany({ where: { userId } });
        await tx.recoveryCode.createMany({ data: u.recoveryCodes.map((r) => ({ userId, codeHash: r.codeHash, usedAt: usedHere.get(r.codeHash) ?? date(r.usedAt) })) });
      }
      if (u.passkeys && (all || fields.includes("passkeys"))) {
        // A signature counter never goes back: an older package must not let a cloned authenticator pass.
        const counterHere = new Map((existing?.passkeys ?? []).map((p) => [p.credentialId, p.counter]));
        await tx.passkey.deleteMany({ where: { userId } });
        await tx.passkey.createMany({
          data: u.passkeys.map((p) => {
            const here = counterHere.get(p.credentialId) ?? 0n;
            return {
              organizationId,
              userId,
              credentialId: p.credentialId,
              userHandle: p.userHandle,
              publicKey: Buffer.from(p.publicKey, "base64url"),
              counter: BigInt(p.counter) > here ? BigInt(p.counter) : here,
              transports: p.transports,
              deviceType: p.deviceType,
              backedUp: p.backedUp,
              aaguid: p.aaguid,
              name: p.name,
              createdAt: new Date(p.createdAt),
              lastUsedAt: date(p.lastUsedAt),
            };
          }),
        });
      }
    }
    for (const { p, existing, write } of providerSteps) {
      if (!write) continue;
      const data = {
        kind: p.kind,
        issuer: p.issuer,
        clientId: p.clientId,
        scopes: p.scopes,
        claimMapping: p.claimMapping as Json,
        domains: p.domains,
        createAccounts: p.createAccounts,
        trustUpstreamMfa: p.trustUpstreamMfa,
        endpoints: p.endpoints ?? Prisma.DbNull,
        teamId: p.teamId,
        keyId: p.keyId,
        assumeVerifiedEmails: p.assumeVerifiedEmails,
      };
      // The secret and the switch stay the target's: a package carries no secret, and the
      // callback address to register upstream is this deployment's own (decision 055). A
      // private_key_jwt connection keeps the target's key, or gets a new one (decision 082).
      const id = existing?.id ?? crypto.randomUUID();
      const method = storedAuthMethod(ctx.encrypter, id, p.tokenEndpointAuthMethod, existing?.clientKeyEncrypted ?? null);
      // A SAML connection's settings; one that encrypted keeps the target's key pair or gets a new one.
      const saml = p.saml
        ? await importedSamlSettings(p.saml, existing ? { kind: existing.kind, saml: existing.saml, clientSecretEncrypted: existing.clientSecretEncrypted } : null, `Porta SAML ${p.issuer}`)
        : null;
      const samlData = saml
        ? {
            saml: saml.settings as Json,
            ...(saml.decryptionKeyPem !== undefined ? { clientSecretEncrypted: saml.decryptionKeyPem === null ? null : encryptProviderSecret(ctx.encrypter, id, saml.decryptionKeyPem) } : {}),
          }
        : { saml: Prisma.DbNull };
      if (existing) await tx.identityProvider.update({ where: { id }, data: { ...data, ...method, ...samlData, version: { increment: 1 } } });
      else await tx.identityProvider.create({ data: { id, organizationId, name: p.name, ...data, ...method, enabled: false, clientSecretEncrypted: null, ...samlData } });
    }
    // After the clients: a resource named in the package gets exactly the grants it gives, as a role its permissions.
    for (const { r, existing, write } of resourceSteps) {
      if (!write) continue;
      const data = { name: r.name, scopes: r.scopes, scopeDescriptions: r.scopeDescriptions, accessTokenTtlSeconds: r.accessTokenTtlSeconds, consentRequired: r.consentRequired, openToDynamicClients: r.openToDynamicClients, status: r.status };
      const id = existing
        ? (await tx.apiResource.update({ where: { id: existing.id }, data: { ...data, version: { increment: 1 } } })).id
        : (await tx.apiResource.create({ data: { organizationId, identifier: r.identifier, ...data } })).id;
      await tx.clientResourceGrant.deleteMany({ where: { resourceId: id } });
      await tx.clientResourceGrant.createMany({ data: r.grants.map((g) => ({ clientId: g.client, resourceId: id, scopes: g.scopes })) });
    }
    return { organizationId, clients: touchedClients, users: touchedUsers };
  }

  return { plan, apply };
}

/** The fields of an existing user that the package would change (roles, claims and 2FA as wholes). */
function userChanges(ctx: Context<"encrypter">, u: PackageUser, totpSecret: string | null, existing: TargetUser): string[] {
  const fields = changedFields(u, existing, ["emailVerified", "givenName", "familyName", "locale", "passwordHash", "status", "emailOtpEnabled"]);
  if (!same(u.legacyPassword ?? null, existing.legacyPassword)) fields.push("legacyPassword");
  if (!same([...u.roles].sort(), [...existing.roles].sort())) fields.push("roles");
  const claimKey = (v: { application: string; claimName: string }) => `${v.application}\u0000${v.claimName}`;
  const wantedClaims = Object.fromEntries(u.claims.map((v) => [claimKey(v), v.value]));
  const haveClaims = Object.fromEntries(existing.claims.map((v) => [claimKey(v), v.value]));
  if (!same(wantedClaims, haveClaims)) fields.push("claims");
  const haveTotp = existing.totp
    ? { secret: ctx.encrypter.decrypt(existing.totp.secretEncrypted, totpAad(existing.id)), status: existing.totp.status, enrolledAt: iso(existing.totp.enrolledAt) }
    : null;
  const wantTotp = u.totp ? { secret: totpSecret, status: u.totp.status, enrolledAt: u.totp.enrolledAt } : null;
  if (!same(wantTotp, haveTotp)) fields.push("totp");
  // A code used here stays used: an older package must not make it valid again.
  const usedHere = new Set(existing.recoveryCodes.filter((r) => r.usedAt).map((r) => r.codeHash));
  const codes = (list: Array<{ codeHash: string; used: boolean }>) => list.map((r) => `${r.codeHash} ${r.used || usedHere.has(r.codeHash)}`).sort();
  const wantedCodes = codes(u.recoveryCodes.map((r) => ({ codeHash: r.codeHash, used: r.usedAt !== null })));
  if (!same(wantedCodes, codes(existing.recoveryCodes.map((r) => ({ codeHash: r.codeHash, used: r.usedAt !== null }))))) fields.push("recoveryCodes");
  const keys = (list: Array<{ credentialId: string; publicKey: string; name: string }>) => list.map((p) => `${p.credentialId} ${p.publicKey} ${p.name}`).sort();
  const havePasskeys = existing.passkeys.map((p) => ({ credentialId: p.credentialId, publicKey: Buffer.from(p.publicKey).toString("base64url"), name: p.name }));
  if (u.passkeys && !same(keys(u.passkeys), keys(havePasskeys))) fields.push("passkeys");
  return fields;
}

/** Where the package would go, refused when that would take over something that is not the target's. */
async function resolveTarget(ctx: Context<"config">, content: PackageContent, slug: string): Promise<TargetState> {
  if (slug === ctx.config.superAdminSlug) throw validation([{ field: "slug", message: "is the super-admin organization, which imports cannot change" }]);
  const target = await loadTarget(ctx.db, slug, content);
  if (target.deleted) throw conflict("organization_deleted", `The slug ${slug} belongs to a deleted organization.`, [{ field: "slug", message: "belongs to a deleted organization" }]);
  const details: FieldDetail[] = [];
  content.clients.forEach((cl, i) => {
    if (target.foreignClientIds.has(cl.id)) details.push({ field: `package.content.clients.${i}.id`, message: "is a client of another organization" });
    cl.secrets.forEach((s, j) => {
      if (target.foreignSecretHashes.has(s.secretHash)) details.push({ field: `package.content.clients.${i}.secrets.${j}`, message: "is a secret of another client" });
    });
  });
  (content.identityProviders ?? []).forEach((p, i) => {
    // Home-realm discovery needs one provider per domain within the organization.
    const owner = [...target.identityProviders].find(([name, other]) => name !== p.name && other.domains.some((d) => p.domains.includes(d)));
    if (owner) details.push({ field: `package.content.identityProviders.${i}.domains`, message: `claims a domain of the identity provider ${owner[0]}` });
  });
  // The target's issuer and the Admin API are resources already (the Admin API's rule, decision 077).
  const reserved = [`${ctx.config.baseUrl}/${slug}`, adminApiResource(ctx.config.baseUrl)].map((value) => value.toLowerCase());
  const reservedAt = (content.apiResources ?? []).flatMap((r, i) => (reserved.includes(r.identifier.toLowerCase()) ? [{ field: `package.content.apiResources.${i}.identifier`, message: "is the organization's issuer or the Admin API, which are resources already" }] : []));
  if (reservedAt.length > 0) throw validation(reservedAt);
  if (details.length > 0) {
    // Most often an organization imported again under a new slug on the same deployment: say how to clone it.
    const clone = target.foreignClientIds.size > 0 ? " To clone the organization on this deployment, import it as a copy (copy: true)." : "";
    throw conflict("import_conflict", `The package names clients or domains that belong elsewhere.${clone}`, details.slice(0, 100));
  }
  return target;
}

/** Where a package goes and how: into its own slug or another, as itself or as a copy (copy.ts). */
export interface ImportOptions {
  slug?: string | undefined;
  copy?: boolean | undefined;
}

/** The verified package as it will be imported: a copy's clients carry their new ids. */
function packageFor(ctx: Context<"packageSeal">, pkg: ExportPackage, options: ImportOptions): { pkg: ExportPackage; targetSlug: string } {
  verifyPackage(ctx, pkg);
  const targetSlug = options.slug ?? pkg.content.organization.slug;
  return { pkg: options.copy ? { ...pkg, content: asCopy(pkg.content, targetSlug) } : pkg, targetSlug };
}

export async function previewImport(ctx: PreviewContext, original: ExportPackage, options: ImportOptions = {}): Promise<ImportPlan> {
  const { pkg, targetSlug } = packageFor(ctx, original, options);
  const target = await resolveTarget(ctx, pkg.content, targetSlug);
  return planImport(ctx, pkg, targetSlug, target).plan;
}

/**
 * Reads the target, checks it and runs the plan in the write's transaction, so it acts on what it
 * checked; caches and the organization's provider are told once it has committed.
 */
export async function applyImport(ctx: PreviewContext & Context<"cache" | "oidc">, original: ExportPackage, options: ImportOptions = {}): Promise<ImportPlan & { organizationId: string }> {
  const { pkg, targetSlug } = packageFor(ctx, original, options);
  // The target is read once, inside the transaction: what the plan acts on is what it checked.
  const target = await resolveTarget(ctx, pkg.content, targetSlug);
  const planned = planImport(ctx, pkg, targetSlug, target);
  const result = await planned.apply(ctx.db);
  const org = { id: result.organizationId, slug: targetSlug };
  ctx.afterCommit(async () => {
    await invalidateOrganization(ctx.cache, org);
    await ctx.oidc.invalidate(org.id);
    for (const id of result.clients) await invalidateClient(ctx.cache, id);
    for (const id of result.users) await invalidateUser(ctx.cache, id);
  });
  return { ...planned.plan, applied: true, organizationId: result.organizationId };
}
