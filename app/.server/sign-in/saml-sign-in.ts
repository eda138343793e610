import { createHash, randomBytes } from "node:crypto";
import type { RequestMeta } from "../auth/actors";
import { anonymousActor } from "../auth/actors";
import type { SecondFactorPlan } from "./plan";
import type { PendingSecondFactor } from "./pending";
import type { MethodContext, SignInContext } from "./method";
import type { InteractionContext } from "./interaction";
import type { Db } from "../context";
import { signInUpstreamPerson, type UpstreamPerson } from "./federated-account";
import { consumeEach, refundEach, type LimitName } from "../rate-limit/limiters";
import { getOrganizationBySlug } from "../directory/organizations";
import { claimMappingOf, clientSecretOf, emailCountsVerified, type ProviderRow } from "../federation/providers";
import { getSamlSettings } from "../federation/saml-settings";
import { samlAddresses } from "../federation/saml-addresses";
import { authnRequestUrl, SAML_REQUEST_TTL_MS, serviceProviderMetadata, type SamlConnection, type SentRequest } from "../federation/saml-protocol";
import { checkSamlResponse, readSamlResponse, type VerifiedAssertion } from "../federation/saml-response";
import { IDP_INITIATED_TTL_SECONDS, type IdpInitiatedMark } from "../federation/idp-initiated-cookie";
import { isEmailAddress } from "~/schemas/email";
import { isUuid } from "~/schemas/uuid";
import { SAML_DEFAULT_ATTRIBUTES, type SamlSettings } from "~/schemas/identity-provider";

/**
 * Signing in through a SAML 2.0 connection (decision 081): the protocol of the login method
 * `federated` (methods/federated.ts) for connections of kind saml, kept beside the methods
 * because it is not a method of its own; the flow sends each provider to its protocol. The start sends an AuthnRequest with a RelayState that names a pending
 * request kept on the server (bound to the interaction, organization, connection and request
 * ID, ten minutes, taken once). The IdP posts its response to the connection's ACS, which has no
 * interaction cookie: the ACS checks the response, records the assertion ID as used and hands the
 * verified person to the interaction under a fresh one-time key; the interaction's return page
 * (with its cookie) takes the key and signs in with the same account rules as an OpenID provider.
 */

type SamlContext = SignInContext<"config" | "encrypter" | "limits" | "store" | "logger" | "cache">;
type SamlSignIn = MethodContext<"config" | "encrypter" | "limits" | "store" | "logger" | "cache">;

const REQUEST_TTL_SECONDS = SAML_REQUEST_TTL_MS / 1000;
/** The verified person waits this long for the browser to arrive at the interaction's page. */
const VERIFIED_TTL_SECONDS = 5 * 60;

const hashed = (prefix: string, value: string) => `${prefix}:${createHash("sha256").update(value).digest("hex")}`;
const requestKey = (relayState: string) => hashed("saml:request", relayState);
const verifiedKey = (key: string) => hashed("saml:verified", key);
const token = () => randomBytes(32).toString("base64url");

interface PendingRequest {
  uid: string;
  organizationId: string;
  providerId: string;
  request: SentRequest;
}

/**
 * What the ACS proved, waiting for the interaction's page: the interaction that asked, or (IdP-
 * initiated, uid null) the one application the connection lets such a sign-in reach.
 */
interface VerifiedPerson {
  uid: string | null;
  clientId: string | null;
  organizationId: string;
  providerId: string;
  person: UpstreamPerson;
  groups: string[];
}

/** Multi-factor authentication context classes (Entra ID, SAML 2.0's token classes, REFEDS MFA). */
export const MULTI_FACTOR_CONTEXTS = new Set([
  "http://schemas.microsoft.com/claims/multipleauthn",
  "urn:oasis:names:tc:SAML:2.0:ac:classes:MobileTwoFactorContract",
  "urn:oasis:names:tc:SAML:2.0:ac:classes:MobileTwoFactorUnregistered",
  "urn:oasis:names:tc:SAML:2.0:ac:classes:TimeSyncToken",
  "https://refeds.org/profile/mfa",
]);

const EMAIL_FORMAT = "urn:oasis:names:tc:SAML:1.1:nameid-format:emailAddress";
const UNSPECIFIED_FORMAT = "urn:oasis:names:tc:SAML:1.1:nameid-format:unspecified";
const TRANSIENT_FORMAT = "urn:oasis:names:tc:SAML:2.0:nameid-format:transient";

/** A connection as node-saml needs it; null when its stored settings do not parse (it signs nobody in). */
export function protocolConnectionOf(ctx: Pick<SamlContext, "config" | "encrypter">, row: ProviderRow, slug: string): SamlConnection | null {
  const settings = getSamlSettings(row);
  if (!settings) return null;
  return {
    idpEntityId: row.issuer,
    settings,
    addresses: samlAddresses(ctx.config.baseUrl, slug, row.id),
    decryptionKey: row.clientSecretEncrypted ? clientSecretOf(ctx.encrypter, row) : null,
  };
}

/** Failed sign-ins are counted per interaction and per client address, as for OpenID providers (the same limits). */
const failureLimits = (ic: InteractionContext, ip: string | null): Array<[LimitName, string | null]> => [
  ["federatedLogin", ic.uid],
  ["federatedLoginIp", ip],
];

async function samlRow(db: Db, organizationId: string, providerId: string): Promise<ProviderRow | null> {
  if (!isUuid(providerId)) return null;
  return db.identityProvider.findFirst({ where: { id: providerId, organizationId, enabled: true, kind: "saml" } });
}

export type SamlStartOutcome = { kind: "redirect"; to: string } | { kind: "unknown" } | RateLimited;

/**
 * The login page's button (or home-realm discovery) for a SAML connection: the IdP's SSO URL with
 * an AuthnRequest and a RelayState. Null when the provider is not a SAML connection of this organization.
 */
export async function startSamlSignIn(ctx: SamlContext, ic: InteractionContext, input: { providerId: string; ip: string | null }): Promise<SamlStartOutcome | null> {
  const row = await samlRow(ctx.db, ic.organization.id, input.providerId);
  if (!row) return null;
  // As for an OpenID provider: the failures so far must still allow a try (starting is not one).
  for (const [name, key] of failureLimits(ic, input.ip)) {
    if (key === null) continue;
    const limit = await ctx.limits.check(name, key);
    if (!limit.allowed) return { kind: "rate_limited", retryAfterSeconds: limit.retryAfterSeconds };
  }
  const connection = protocolConnectionOf(ctx, row, ic.organization.slug);
  if (!connection) {
    ctx.logger.warn({ providerId: row.id }, "SAML connection settings do not parse");
    return { kind: "unknown" };
  }
  const relayState = token();
  const { url, request } = await authnRequestUrl(connection, relayState);
  const pending: PendingRequest = { uid: ic.uid, organizationId: ic.organization.id, providerId: row.id, request };
  await ctx.store.set(requestKey(relayState), JSON.stringify(pending), REQUEST_TTL_SECONDS);
  return { kind: "redirect", to: url };
}

/** Why an ACS post or the return page ended without signing in: the reason of the audit entry and the page's words. */
export type SamlFailure = { kind: "failed"; reason: "expired" | "invalid" | "refused" | "no_account" | "unverified_email" | "inactive"; providerName: string | null; backTo: string | null };
export type RateLimited = { kind: "rate_limited"; retryAfterSeconds: number };
export type AcsOutcome =
  | { kind: "next"; to: string }
  /** IdP-initiated: to the application's sign-in start, the browser marked for its next authorization request. */
  | { kind: "idp_initiated"; to: string; mark: IdpInitiatedMark }
  | { kind: "unknown" }
  | SamlFailure
  | RateLimited;

/**
 * POST /{slug}/saml/{providerId}/acs. Every refusal is audited (`auth.login.failure`, method
 * saml, the reason), logged on one line without the assertion, and counted against the client
 * address; nothing is created before the interaction's page.
 */
export async function acceptSamlResponse(
  ctx: SamlContext,
  input: { slug: string; providerId: string; samlResponse: string; relayState: string; meta: RequestMeta; oversized?: boolean },
): Promise<AcsOutcome> {
  const limits: Array<[LimitName, string | null]> = [["federatedLoginIp", input.meta.ip]];
  const limit = input.meta.ip ? await ctx.limits.check("federatedLoginIp", input.meta.ip) : ({ allowed: true } as const);
  if (!limit.allowed) return { kind: "rate_limited", retryAfterSeconds: limit.retryAfterSeconds };
  const organization = await getOrganizationBySlug(ctx.db, ctx.cache, input.slug);
  if (!organization || organization.status !== "active") return { kind: "unknown" };
  const row = await samlRow(ctx.db, organization.id, input.providerId);
  if (!row) return { kind: "unknown" };

  const refuse = async (reason: string, detail: string, page: SamlFailure["reason"], uid: string | null): Promise<SamlFailure> => {
    await consumeEach(ctx.limits, limits);
    ctx.logger.info({ providerId: row.id, organizationId: organization.id, reason, detail }, "SAML response refused");
    await ctx.transaction(anonymousActor(input.meta), async (tx) => {
      tx.audit({ eventType: "auth.login.failure", organizationId: organization.id, data: { method: "saml", reason, providerId: row.id } });
    });
    return { kind: "failed", reason: page, providerName: row.name, backTo: uid ? `/interaction/${encodeURIComponent(uid)}` : null };
  };

  /** The response checked (for the request, or as unsolicited), the person read, and the assertion ID used up. */
  const accept = async (connection: SamlConnection, request: SentRequest | null, uid: string | null): Promise<SamlFailure | { kind: "accepted"; verified: VerifiedPerson }> => {
    const checked = await checkSamlResponse(connection, request, input.samlResponse);
    if (!checked.ok) return refuse(checked.reason, checked.detail, checked.reason === "upstream_error" ? "refused" : "invalid", uid);
    const derived = samlPersonOf(row, connection.settings, checked.assertion);
    if (!derived.ok) return refuse(derived.reason, derived.detail, "invalid", uid);
    // The assertion is used once, across every Porta process: the table's primary key refuses a second insert.
    const fresh = await ctx.transaction(anonymousActor(input.meta), async (tx) => {
      try {
        await tx.db.samlAssertionUse.create({ data: { providerId: row.id, assertionId: checked.assertion.assertionId, expiresAt: checked.assertion.usableUntil } });
        return true;
      } catch (error) {
        if ((error as { code?: string }).code === "P2002") return false;
        throw error;
      }
    });
    if (!fresh) return refuse("replay", "assertion ID already used", "invalid", uid);
    return { kind: "accepted", verified: { uid, clientId: null, organizationId: organization.id, providerId: row.id, person: derived.person, groups: derived.groups } };
  };

  const relayState = input.relayState.length > 0 && input.relayState.length <= 512 ? input.relayState : "";
  const taken = relayState ? await ctx.store.take(requestKey(relayState)) : null;
  const pending = taken ? (JSON.parse(taken) as PendingRequest) : null;
  const ours = pending && pending.organizationId === organization.id && pending.providerId === row.id ? pending : null;
  if (input.oversized) return refuse("too_large", "posted form over the size limit", "invalid", ours?.uid ?? null);
  const connection = protocolConnectionOf(ctx, row, organization.slug);
  if (ours) {
    if (!connection) return refuse("invalid_settings", "connection settings do not parse", "invalid", ours.uid);
    const accepted = await accept(connection, ours.request, ours.uid);
    if (accepted.kind === "failed") return accepted;
    const key = token();
    await ctx.store.set(verifiedKey(key), JSON.stringify(accepted.verified), VERIFIED_TTL_SECONDS);
    return { kind: "next", to: `/interaction/${encodeURIComponent(ours.uid)}/federated/return?saml=${key}` };
  }

  // No sign-in of this connection is waiting for it: an IdP-initiated response, or one meant for another browser or connection.
  const read = readSamlResponse(input.samlResponse);
  if (!read.ok) return refuse(read.reason, read.detail, "invalid", null);
  if (read.inResponseTo !== null) return refuse("invalid_state", "no pending request for this RelayState", "expired", null);
  const clientId = connection?.settings.idpInitiatedClientId ?? null;
  if (!connection || !clientId) return refuse("unsolicited_response", "IdP-initiated sign-in is off for this connection", "invalid", null);
  const client = await ctx.db.client.findFirst({ where: { id: clientId, organizationId: organization.id, status: "active" }, select: { id: true, initiateLoginUri: true } });
  if (!client?.initiateLoginUri) return refuse("idp_initiated_unavailable", "the connection's application has no sign-in start address", "invalid", null);
  const accepted = await accept(connection, null, null);
  if (accepted.kind === "failed") return accepted;
  const key = token();
  await ctx.store.set(verifiedKey(key), JSON.stringify({ ...accepted.verified, clientId: client.id } satisfies VerifiedPerson), IDP_INITIATED_TTL_SECONDS);
  // OpenID Connect third-party initiated login: the application starts an authorization request of its own.
  const start = new URL(client.initiateLoginUri);
  start.searchParams.set("iss", `${ctx.config.baseUrl}/${organization.slug}`);
  if (accepted.verified.person.email) start.searchParams.set("login_hint", accepted.verified.person.email);
  return { kind: "idp_initiated", to: start.href, mark: { clientId: client.id, key } };
}

/**
 * The login page of an authorization request that the application the mark names started
 * after an IdP-initiated sign-in: where its verified person is taken. Null for any other client.
 */
export function idpInitiatedContinuation(ic: InteractionContext, mark: IdpInitiatedMark | null): string | null {
  if (!mark || mark.clientId !== ic.client.id) return null;
  return `/interaction/${encodeURIComponent(ic.uid)}/federated/return?saml=${mark.key}`;
}

/** The person the signed assertion names, with the connection's attribute mapping. */
export function samlPersonOf(row: ProviderRow, settings: SamlSettings, assertion: VerifiedAssertion): { ok: true; person: UpstreamPerson; groups: string[] } | { ok: false; reason: string; detail: string } {
  const format = assertion.nameIdFormat ?? UNSPECIFIED_FORMAT;
  // A transient NameID changes at every sign-in; another format than the connection asks for could name the same person differently.
  if (format === TRANSIENT_FORMAT) return { ok: false, reason: "wrong_name_id_format", detail: "transient NameID" };
  if (settings.nameIdFormat !== UNSPECIFIED_FORMAT && format !== settings.nameIdFormat) return { ok: false, reason: "wrong_name_id_format", detail: `NameID format ${format.slice(0, 100)}` };
  const mapping = { ...SAML_DEFAULT_ATTRIBUTES, ...claimMappingOf(row) };
  const first = (name: string) => assertion.attributes[name]?.[0] ?? null;
  const asserted = (first(mapping.email) ?? (format === EMAIL_FORMAT ? assertion.nameId : null))?.toLowerCase() ?? null;
  const email = asserted && isEmailAddress(asserted) ? asserted : null;
  return {
    ok: true,
    person: {
      subject: assertion.nameId,
      email,
      // SAML says nothing about verification: the connection vouches for its own domains, when told to.
      emailVerified: emailCountsVerified(row, email, null),
      givenName: first(mapping.givenName)?.slice(0, 200) ?? null,
      familyName: first(mapping.familyName)?.slice(0, 200) ?? null,
      mfa: assertion.authnContextClassRefs.some((c) => MULTI_FACTOR_CONTEXTS.has(c)),
    },
    groups: (assertion.attributes[mapping.groups] ?? []).slice(0, 500),
  };
}

export type SamlCompleteOutcome =
  | { kind: "redirect"; to: string }
  | { kind: "second_factor"; userId: string; plan: SecondFactorPlan; primary: NonNullable<PendingSecondFactor["primary"]> }
  | { kind: "failed"; reason: SamlFailure["reason"]; providerName: string | null }
  | RateLimited;

/** Role names a connection maps that the organization does not have, logged once per process. */
const unknownRolesLogged = new Set<string>();

/**
 * /interaction/:uid/federated/return?saml=<key>: the verified person taken (once), checked to
 * belong to this interaction, then signed in as an OpenID provider's person would be, the roles
 * its groups map to set in the same transaction.
 */
export async function completeSamlSignIn(ctx: SamlSignIn, ic: InteractionContext, input: { key: string; meta: RequestMeta }): Promise<SamlCompleteOutcome> {
  const limits = failureLimits(ic, input.meta.ip);
  const limit = await consumeEach(ctx.limits, limits);
  const audit = (reason: string, providerId: string | null, more: Record<string, unknown> = {}) =>
    ctx.transaction(anonymousActor(input.meta), async (tx) => {
      tx.audit({ eventType: "auth.login.failure", organizationId: ic.organization.id, data: { method: "saml", reason, clientId: ic.client.id, ...(providerId ? { providerId } : {}), ...more } });
    });
  if (!limit.allowed) {
    await audit("rate_limited", null);
    return { kind: "rate_limited", retryAfterSeconds: limit.retryAfterSeconds };
  }
  const text = input.key && input.key.length <= 100 ? await ctx.store.take(verifiedKey(input.key)) : null;
  const verified = text ? (JSON.parse(text) as VerifiedPerson) : null;
  // IdP-initiated: any authorization request of the one application the connection names.
  const forThis = verified && (verified.uid === null ? verified.clientId === ic.client.id : verified.uid === ic.uid);
  if (!verified || !forThis || verified.organizationId !== ic.organization.id) {
    await audit("invalid_state", verified?.providerId ?? null);
    return { kind: "failed", reason: "expired", providerName: null };
  }
  const row = await samlRow(ctx.db, ic.organization.id, verified.providerId);
  const settings = row ? getSamlSettings(row) : null;
  if (!row || !settings) {
    await audit("provider_disabled", verified.providerId);
    return { kind: "failed", reason: "expired", providerName: null };
  }
  const outcome = await signInAs(ctx, ic, row, settings, verified, input.meta);
  if (outcome.kind === "redirect" || outcome.kind === "second_factor") await refundEach(ctx.limits, limits);
  return outcome;
}

function signInAs(ctx: SamlSignIn, ic: InteractionContext, row: ProviderRow, settings: SamlSettings, verified: VerifiedPerson, meta: RequestMeta): Promise<SamlCompleteOutcome> {
  const actorData = { organizationId: ic.organization.id, targetType: "user" } as const;
  return signInUpstreamPerson(ctx, ic, row, verified.person, {
    meta,
    method: "saml",
    alsoFor: async (tx, userId) => {
      for (const change of await syncGroupRoles(ctx, tx.db, ic.organization.id, row, settings, userId, verified.groups)) {
        tx.audit({ eventType: change.kind === "assigned" ? "user.role_assigned" : "user.role_removed", ...actorData, targetId: userId, data: { change: { roleId: change.roleId, role: change.role }, source: "saml_groups", providerId: row.id } });
      }
    },
  });
}

/**
 * The roles the connection's group mapping manages: the person gets those their asserted groups
 * map to and loses those the mapping manages but their groups no longer give. Roles given by
 * hand outside the mapping are left alone; names the organization has no role for are ignored.
 */
async function syncGroupRoles(
  ctx: Pick<SamlSignIn, "logger">,
  db: Db,
  organizationId: string,
  row: ProviderRow,
  settings: SamlSettings,
  userId: string,
  groups: string[],
): Promise<Array<{ kind: "assigned" | "removed"; roleId: string; role: string }>> {
  if (settings.groupRoles.length === 0) return [];
  const managed = new Set(settings.groupRoles.flatMap((g) => g.roles));
  const asserted = new Set(groups);
  const given = new Set(settings.groupRoles.filter((g) => asserted.has(g.group)).flatMap((g) => g.roles));
  const roles = await db.role.findMany({ where: { organizationId, name: { in: [...managed] } }, select: { id: true, name: true } });
  for (const name of managed) {
    const key = `${row.id}:${name}`;
    if (!roles.some((r) => r.name === name) && !unknownRolesLogged.has(key)) {
      unknownRolesLogged.add(key);
      ctx.logger.warn({ providerId: row.id, role: name.slice(0, 100) }, "SAML group mapping names a role the organization does not have");
    }
  }
  const held = new Set((await db.userRole.findMany({ where: { userId, roleId: { in: roles.map((r) => r.id) } }, select: { roleId: true } })).map((r) => r.roleId));
  const changes: Array<{ kind: "assigned" | "removed"; roleId: string; role: string }> = [];
  for (const role of roles) {
    if (given.has(role.name) && !held.has(role.id)) {
      await db.userRole.create({ data: { userId, roleId: role.id } });
      changes.push({ kind: "assigned", roleId: role.id, role: role.name });
    } else if (!given.has(role.name) && held.has(role.id)) {
      await db.userRole.delete({ where: { userId_roleId: { userId, roleId: role.id } } });
      changes.push({ kind: "removed", roleId: role.id, role: role.name });
    }
  }
  return changes;
}

/** The SP metadata of an enabled SAML connection of the organization; null for anything else. */
export async function samlMetadata(ctx: SignInContext<"config" | "encrypter" | "cache">, slug: string, providerId: string): Promise<string | null> {
  const organization = await getOrganizationBySlug(ctx.db, ctx.cache, slug);
  if (!organization || organization.status !== "active") return null;
  const row = await samlRow(ctx.db, organization.id, providerId);
  if (!row) return null;
  const connection = protocolConnectionOf(ctx, row, organization.slug);
  return connection ? await serviceProviderMetadata(connection) : null;
}
