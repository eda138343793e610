import { createHash } from "node:crypto";
import type * as Oidc from "openid-client";
import type { RequestMeta } from "../../auth/actors";
import { anonymousActor } from "../../auth/actors";
import type { SecondFactorPlan } from "../plan";
import type { PendingSecondFactor } from "../pending";
import type { FirstFactor, MethodContext, SignInContext } from "../method";
import type { InteractionContext } from "../interaction";
import { signInUpstreamPerson, type UpstreamPerson } from "../federated-account";
import { ACR } from "../../oidc/features/acr";
import { guardedFetch } from "../../outbound/guard";
import { consumeEach, refundEach, type LimitName, type LimitOutcome } from "../../rate-limit/limiters";
import { getOrganizationBySlug } from "../../directory/organizations";
import { onFirstUse } from "../../lazy";
import { appleClientSecret, appleFirstSignInName } from "../../federation/apple";
import { githubAuthorizationUrl, githubPerson } from "../../federation/github";
import {
  authMethodOf,
  chooseTokenEndpointAuthMethod,
  claimMappingOf,
  clientKeyOf,
  clientSecretOf,
  emailCountsVerified,
  enabledProviders,
  endpointsOf,
  federationCallbackUrl,
  providerForEmail,
  type ProviderRow,
} from "../../federation/providers";

/**
 * Signing in through an upstream OpenID provider (decision 046). openid-client (on
 * oauth4webapi) speaks the protocol: discovery, the authorization request with state, nonce and
 * PKCE (S256) on every request, the code exchange and the ID token's checks (iss, aud, exp,
 * iat, nonce, azp, its signature against the upstream JWKS with the algorithms the upstream
 * announces). Every outbound request goes through the SSRF guard with a timeout. The state,
 * nonce and verifier stay on the server, bound to the interaction, and are taken once.
 */

export const federated: FirstFactor = { kind: "first", method: "federated" };

/** What the federated steps use: the base URL, the secrets' key, the limits, the store of states, the log. */
type FederationContext = SignInContext<"config" | "encrypter" | "limits" | "store" | "logger" | "cache">;
type FederationSignIn = MethodContext<"config" | "encrypter" | "limits" | "store" | "logger" | "cache">;

const STATE_TTL_SECONDS = 10 * 60;
const OUTBOUND_TIMEOUT_MS = 5_000;
const OUTBOUND_MAX_BYTES = 512 * 1024;
const DISCOVERY_TTL_MS = 10 * 60 * 1000;

const stateKey = (state: string) => `federation:state:${createHash("sha256").update(state).digest("hex")}`;

interface PendingUpstream {
  uid: string;
  organizationId: string;
  providerId: string;
  nonce: string;
  verifier: string;
}

/** openid-client (with oauth4webapi) loads with the first federated sign-in, not at every start (decision 056). */
const openidClient = onFirstUse(() => import("openid-client"));

/** The upstream's configuration (discovery document) per provider version, kept a few minutes. */
const discovered = new Map<string, { at: number; config: Oidc.Configuration }>();

const upstreamFetch = (ctx: FederationContext) =>
  guardedFetch({ allowPrivateNetworks: ctx.config.outboundAllowPrivateNetworks, timeoutMs: OUTBOUND_TIMEOUT_MS, maxBytes: OUTBOUND_MAX_BYTES });

export async function upstreamConfiguration(ctx: FederationContext, row: ProviderRow): Promise<Oidc.Configuration> {
  const oidc = await openidClient();
  const cacheKey = `${row.id}:${row.version}`;
  const hit = discovered.get(cacheKey);
  if (hit && Date.now() - hit.at < DISCOVERY_TTL_MS) return hit.config;
  const allowPrivate = ctx.config.outboundAllowPrivateNetworks;
  const guarded = upstreamFetch(ctx);
  const fetchGuarded: Oidc.CustomFetch = (url, options) => guarded(url, options as RequestInit);
  const secret = clientSecretOf(ctx.encrypter, row);
  // Apple's client secret is a JWT signed with its key, sent in the body (the only method Apple takes).
  const auth =
    row.kind === "apple" && secret
      ? oidc.ClientSecretPost(await appleClientSecret({ pem: secret, teamId: row.teamId ?? "", keyId: row.keyId ?? "", clientId: row.clientId }))
      : await clientAuthentication(ctx, row, secret);
  const config = await oidc.discovery(new URL(row.issuer), row.clientId, undefined, auth, {
    [oidc.customFetch]: fetchGuarded,
    timeout: OUTBOUND_TIMEOUT_MS / 1000,
    // Plain http only where an operator lets requests reach private networks (tests, closed networks).
    execute: [...(allowPrivate ? [oidc.allowInsecureRequests] : []), oidc.enableNonRepudiationChecks],
  });
  config[oidc.customFetch] = fetchGuarded;
  if (discovered.size > 500) discovered.clear();
  discovered.set(cacheKey, { at: Date.now(), config });
  return config;
}

/**
 * The token endpoint's client authentication (decision 082): the connection's method, or for
 * `auto` the one `chooseTokenEndpointAuthMethod` picks from the discovery document, which is read
 * when the request is made (the method applies to the server metadata it is handed).
 */
async function clientAuthentication(ctx: FederationContext, row: ProviderRow, secret: string | null): Promise<Oidc.ClientAuth> {
  const oidc = await openidClient();
  const method = authMethodOf(row);
  if (method === "private_key_jwt") {
    const jwk = clientKeyOf(ctx.encrypter, row);
    if (!jwk) return oidc.None();
    const { kid, ...material } = jwk;
    const key = await crypto.subtle.importKey("jwk", { ...material, key_ops: ["sign"] }, { name: "ECDSA", namedCurve: "P-256" }, false, ["sign"]);
    return oidc.PrivateKeyJwt({ key, kid });
  }
  if (method === "none") return oidc.None();
  if (method === "client_secret_post") return oidc.ClientSecretPost(secret ?? "");
  if (method === "client_secret_basic") return oidc.ClientSecretBasic(secret ?? "");
  return (as, client, body, headers) => {
    const chosen = chooseTokenEndpointAuthMethod(as.token_endpoint_auth_methods_supported, row.clientId, secret);
    const auth = chosen === "none" ? oidc.None() : chosen === "client_secret_post" ? oidc.ClientSecretPost(secret!) : oidc.ClientSecretBasic(secret!);
    return auth(as, client, body, headers);
  };
}

export type RateLimited = { kind: "rate_limited"; retryAfterSeconds: number };

export type StartOutcome = { kind: "redirect"; to: string } | { kind: "unknown" } | { kind: "unreachable"; providerName: string } | RateLimited;

/** Failed federated sign-ins are counted per client address and per interaction; a successful one gives its points back. */
const failureLimits = (ic: InteractionContext, ip: string | null): Array<[LimitName, string | null]> => [
  ["federatedLogin", ic.uid],
  ["federatedLoginIp", ip],
];

/** Whether the failures so far still allow a try, without counting one (starting is not a failure). */
async function checkFailures(ctx: FederationContext, checks: Array<[LimitName, string | null]>): Promise<LimitOutcome> {
  for (const [name, key] of checks) {
    if (key === null) continue;
    const outcome = await ctx.limits.check(name, key);
    if (!outcome.allowed) return outcome;
  }
  return { allowed: true };
}

/** The provider row of this interaction's organization, when enabled. */
async function enabledProvider(ctx: FederationContext, organizationId: string, providerId: string): Promise<ProviderRow | null> {
  return ctx.db.identityProvider.findFirst({ where: { id: providerId, organizationId, enabled: true } });
}

/** Sends the browser to the upstream provider, with state, nonce and PKCE kept for this interaction. */
export async function startFederatedSignIn(ctx: FederationContext, ic: InteractionContext, input: { providerId: string; loginHint?: string; ip: string | null }): Promise<StartOutcome> {
  const oidc = await openidClient();
  const limit = await checkFailures(ctx, failureLimits(ic, input.ip));
  if (!limit.allowed) return { kind: "rate_limited", retryAfterSeconds: limit.retryAfterSeconds };
  const row = await enabledProvider(ctx, ic.organization.id, input.providerId);
  if (!row) return { kind: "unknown" };
  if (row.kind === "github") {
    // OAuth 2.0 without discovery: state and PKCE as for every provider, no nonce (there is no ID token).
    const state = oidc.randomState();
    const verifier = oidc.randomPKCECodeVerifier();
    const pending: PendingUpstream = { uid: ic.uid, organizationId: ic.organization.id, providerId: row.id, nonce: "", verifier };
    await ctx.store.set(stateKey(state), JSON.stringify(pending), STATE_TTL_SECONDS);
    const to = githubAuthorizationUrl(endpointsOf(row), {
      clientId: row.clientId,
      redirectUri: federationCallbackUrl(ctx.config.baseUrl, ic.organization.slug),
      scopes: row.scopes,
      state,
      codeChallenge: await oidc.calculatePKCECodeChallenge(verifier),
    });
    return { kind: "redirect", to };
  }
  let config: Oidc.Configuration;
  try {
    config = await upstreamConfiguration(ctx, row);
  } catch (error) {
    ctx.logger.warn({ err: errorSummary(error), providerId: row.id }, "upstream identity provider unreachable");
    // Starting is not a failure of the person (no point is counted), but the organization sees that its upstream was down.
    await ctx.transaction(async (tx) => {
      tx.audit({
        eventType: "auth.login.failure",
        organizationId: ic.organization.id,
        data: { method: "federated", reason: "upstream_unreachable", clientId: ic.client.id, providerId: row.id },
      });
    });
    return { kind: "unreachable", providerName: row.name };
  }
  const state = oidc.randomState();
  const nonce = oidc.randomNonce();
  const verifier = oidc.randomPKCECodeVerifier();
  const pending: PendingUpstream = { uid: ic.uid, organizationId: ic.organization.id, providerId: row.id, nonce, verifier };
  await ctx.store.set(stateKey(state), JSON.stringify(pending), STATE_TTL_SECONDS);
  const url = oidc.buildAuthorizationUrl(config, {
    redirect_uri: federationCallbackUrl(ctx.config.baseUrl, ic.organization.slug),
    scope: row.scopes.join(" "),
    state,
    nonce,
    code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
    code_challenge_method: "S256",
    ...(input.loginHint ? { login_hint: input.loginHint } : {}),
    // Apple answers a request for the name or email only by a form posted to the callback.
    ...(row.kind === "apple" ? { response_mode: "form_post" } : {}),
  });
  return { kind: "redirect", to: url.href };
}

/**
 * The callback knows only the state: it finds which interaction it belongs to (read, not taken:
 * the interaction's own page takes it, with the browser's interaction cookie) and of which
 * organization. Null for an unknown, expired or used state, or another organization's.
 */
export async function interactionOfState(ctx: FederationContext, organizationId: string, state: string): Promise<string | null> {
  if (!state || state.length > 512) return null;
  const text = await ctx.store.get(stateKey(state));
  if (!text) return null;
  const pending = JSON.parse(text) as PendingUpstream;
  return pending.organizationId === organizationId ? pending.uid : null;
}

export type FederatedFailure =
  /** No such state for this interaction (forged, replayed, expired, another browser's). */
  | "expired"
  /** The upstream answered with an error (the person cancelled, or it refused). */
  | "refused"
  /** The upstream could not be reached. */
  | "unreachable"
  /** The answer did not pass the checks (ID token, nonce, code). */
  | "invalid"
  /** Nobody here for that upstream account and no account may be created. */
  | "no_account"
  /** An account with the asserted email exists but the upstream did not say the email is verified. */
  | "unverified_email"
  /** The account is deactivated. */
  | "inactive";

export type CompleteOutcome =
  | { kind: "redirect"; to: string }
  /** The upstream proved who signs in, but the organization's second factor must follow (decision 046). */
  | { kind: "second_factor"; userId: string; plan: SecondFactorPlan; primary: NonNullable<PendingSecondFactor["primary"]> }
  | { kind: "failed"; reason: FederatedFailure; providerName: string | null }
  | RateLimited;

const MULTI_FACTOR_ACR = new Set([ACR.twoFactors, "http://schemas.openid.net/pape/policies/2007/06/multi-factor", "urn:mace:incommon:iap:silver:mfa", "mfa"]);

function personOf(row: ProviderRow, claims: Record<string, unknown>): UpstreamPerson {
  const mapping = claimMappingOf(row);
  const text = (name: string) => (typeof claims[name] === "string" && (claims[name] as string).trim() ? (claims[name] as string).trim() : null);
  const amr = Array.isArray(claims.amr) ? claims.amr.filter((v): v is string => typeof v === "string") : [];
  const acr = typeof claims.acr === "string" ? claims.acr : "";
  const verified = claims[mapping.emailVerified ?? "email_verified"];
  const email = text(mapping.email ?? "email")?.toLowerCase() ?? null;
  // Only a literal true (or the string "true" some providers send) asserts it; no claim at all says nothing.
  const asserted = verified === undefined || verified === null ? null : verified === true || verified === "true";
  return {
    subject: String(claims.sub),
    email,
    emailVerified: emailCountsVerified(row, email, asserted),
    emailAsserted: asserted === true,
    givenName: text(mapping.givenName ?? "given_name"),
    familyName: text(mapping.familyName ?? "family_name"),
    mfa: amr.includes("mfa") || MULTI_FACTOR_ACR.has(acr),
  };
}

function errorSummary(error: unknown): string {
  if (error instanceof Error) return `${error.name}: ${error.message}`.slice(0, 300);
  return "unknown error";
}

/**
 * The upstream's answer at /interaction/:uid/federated/return. The point is taken before anything
 * is looked at (so parallel forged answers cannot overrun the limit) and given back when the
 * answer leads on (signed in, or on to the second factor): the limits count failures only.
 */
export async function completeFederatedSignIn(
  ctx: FederationSignIn,
  ic: InteractionContext,
  input: { search: URLSearchParams; meta: RequestMeta; language: string },
): Promise<CompleteOutcome> {
  const limits = failureLimits(ic, input.meta.ip);
  const limit = await consumeEach(ctx.limits, limits);
  if (!limit.allowed) {
    await ctx.transaction(anonymousActor(input.meta), async (tx) => {
      tx.audit({ eventType: "auth.login.failure", organizationId: ic.organization.id, data: { method: "federated", reason: "rate_limited", clientId: ic.client.id } });
    });
    return { kind: "rate_limited", retryAfterSeconds: limit.retryAfterSeconds };
  }
  const outcome = await checkAnswer(ctx, ic, input);
  if (outcome.kind === "redirect" || outcome.kind === "second_factor") await refundEach(ctx.limits, limits);
  return outcome;
}

/** The answer checked, then the account, then the sign-in or the second factor. */
async function checkAnswer(ctx: FederationSignIn, ic: InteractionContext, input: { search: URLSearchParams; meta: RequestMeta; language: string }): Promise<CompleteOutcome> {
  const oidc = await openidClient();
  const state = input.search.get("state") ?? "";
  const taken = state ? await ctx.store.take(stateKey(state)) : null;
  const pending = taken ? (JSON.parse(taken) as PendingUpstream) : null;
  const audit = (reason: string, providerId: string | null, userId?: string, upstreamError?: string) =>
    ctx.transaction(anonymousActor(input.meta), async (tx) => {
      tx.audit({
        eventType: "auth.login.failure",
        organizationId: ic.organization.id,
        ...(userId ? { targetType: "user", targetId: userId } : {}),
        data: { method: "federated", reason, clientId: ic.client.id, ...(providerId ? { providerId } : {}), ...(upstreamError ? { upstreamError } : {}) },
      });
    });
  if (!pending || pending.uid !== ic.uid || pending.organizationId !== ic.organization.id) {
    await audit("invalid_state", pending?.providerId ?? null);
    return { kind: "failed", reason: "expired", providerName: null };
  }
  const row = await enabledProvider(ctx, ic.organization.id, pending.providerId);
  if (!row) {
    await audit("provider_disabled", pending.providerId);
    return { kind: "failed", reason: "expired", providerName: null };
  }
  const fail = async (reason: FederatedFailure, detail: string, userId?: string, upstreamError?: string): Promise<CompleteOutcome> => {
    await audit(detail, row.id, userId, upstreamError);
    return { kind: "failed", reason, providerName: row.name };
  };
  if (input.search.has("error")) return fail("refused", `upstream_${(input.search.get("error") ?? "").slice(0, 64)}`);
  if (row.kind === "github") {
    const code = input.search.get("code");
    if (!code) return fail("invalid", "invalid_upstream_response");
    try {
      const github = await githubPerson(upstreamFetch(ctx), endpointsOf(row), {
        clientId: row.clientId,
        clientSecret: clientSecretOf(ctx.encrypter, row),
        code,
        redirectUri: federationCallbackUrl(ctx.config.baseUrl, ic.organization.slug),
        verifier: pending.verifier,
        allowInsecure: ctx.config.outboundAllowPrivateNetworks,
      });
      const [givenName, ...rest] = (github.name ?? "").split(/\s+/).filter(Boolean);
      const person: UpstreamPerson = {
        subject: github.subject,
        email: github.email,
        emailVerified: github.emailVerified,
        emailAsserted: github.emailVerified,
        givenName: givenName ?? null,
        familyName: rest.length > 0 ? rest.join(" ") : null,
        // GitHub says nothing about how the person signed in there.
        mfa: false,
      };
      return signInAs(ctx, ic, row, person, input);
    } catch (error) {
      return upstreamError(ctx, row, error, fail);
    }
  }

  let config: Oidc.Configuration;
  try {
    config = await upstreamConfiguration(ctx, row);
  } catch (error) {
    ctx.logger.warn({ err: errorSummary(error), providerId: row.id }, "upstream identity provider unreachable");
    return fail("unreachable", "upstream_unreachable");
  }
  const callback = new URL(federationCallbackUrl(ctx.config.baseUrl, ic.organization.slug));
  callback.search = input.search.toString();
  let person: UpstreamPerson;
  try {
    const tokens = await oidc.authorizationCodeGrant(config, callback, {
      pkceCodeVerifier: pending.verifier,
      expectedState: state,
      expectedNonce: pending.nonce,
      idTokenExpected: true,
    });
    const idClaims = tokens.claims();
    if (!idClaims) return fail("invalid", "no_id_token");
    let claims: Record<string, unknown> = { ...idClaims };
    const mapping = claimMappingOf(row);
    if (claims[mapping.email ?? "email"] === undefined && tokens.access_token && config.serverMetadata().userinfo_endpoint) {
      // Providers that answer profile claims at userinfo only (Porta among them, when it issues an access token).
      const userinfo = await oidc.fetchUserInfo(config, tokens.access_token, idClaims.sub);
      claims = { ...userinfo, ...idClaims };
    }
    person = personOf(row, claims);
    if (row.kind === "apple" && !person.givenName && !person.familyName) {
      // Apple's ID token has no name; the posted `user` has it, on the first sign-in only.
      person = { ...person, ...appleFirstSignInName(input.search.get("user")) };
    }
  } catch (error) {
    return upstreamError(ctx, row, error, fail);
  }
  return signInAs(ctx, ic, row, person, input);
}

/**
 * An upstream request that failed: unreachable (502) or an answer that cannot be used (400). When
 * the upstream answered with an OAuth error (its token endpoint refusing the client, the code,
 * the verifier), its code goes into the audit entry and the log line as `upstreamError`: that is
 * what an operator compares with the upstream's own logs. The description is not kept (free text
 * from another server); neither are tokens or the secret, which no error carries.
 */
function upstreamError(
  ctx: FederationContext,
  row: ProviderRow,
  error: unknown,
  fail: (reason: FederatedFailure, detail: string, userId?: string, upstreamError?: string) => Promise<CompleteOutcome>,
) {
  if (isUnreachable(error)) {
    ctx.logger.warn({ err: errorSummary(error), providerId: row.id }, "upstream identity provider unreachable");
    return fail("unreachable", "upstream_unreachable");
  }
  const code = upstreamErrorCode(error);
  ctx.logger.info({ err: errorSummary(error), providerId: row.id, ...(code ? { upstreamError: code } : {}) }, "upstream sign-in answer refused");
  return fail("invalid", "invalid_upstream_response", undefined, code ?? undefined);
}

/** The OAuth error code of an upstream's error answer (a JSON body, or a WWW-Authenticate challenge), when it is one. */
export function upstreamErrorCode(error: unknown): string | null {
  if (!(error instanceof Error)) return null;
  const own = (error as { error?: unknown }).error;
  const challenges = (error as { cause?: unknown }).cause;
  const fromChallenge = Array.isArray(challenges)
    ? (challenges as Array<{ parameters?: { error?: unknown } }>).map((c) => c?.parameters?.error).find((e) => typeof e === "string")
    : undefined;
  const code = typeof own === "string" ? own : fromChallenge;
  // RFC 6749's error codes are printable ASCII without quote and backslash; anything else is not kept.
  return typeof code === "string" && /^[\x20\x21\x23-\x5B\x5D-\x7E]{1,64}$/.test(code) ? code : null;
}

function isUnreachable(error: unknown): boolean {
  const text = error instanceof Error ? `${error.name} ${error.message} ${error.cause instanceof Error ? error.cause.message : ""}` : "";
  return /fetch failed|ECONNREFUSED|ENOTFOUND|EREFUSED|TimeoutError|aborted|special-use|timed out/i.test(text);
}

/**
 * Which account the upstream person is: an existing link by (provider, subject); otherwise an
 * account with the same email only when the email counts as verified (never by an unverified one:
 * that is how accounts are taken over) and the organization's verified domains allow it (decision
 * 086: an assumed email needs a verified domain, a verified domain claimed by a connection links
 * through that connection only); otherwise a new account when the provider creates accounts, on
 * the same terms. All in the transaction that signs in (sign-in/federated-account.ts).
 */
function signInAs(ctx: FederationSignIn, ic: InteractionContext, row: ProviderRow, person: UpstreamPerson, input: { meta: RequestMeta }): Promise<CompleteOutcome> {
  return signInUpstreamPerson(ctx, ic, row, person, { meta: input.meta, method: "federated" });
}

/**
 * GET {BASE_URL}/{slug}/federation/callback: the address registered at the upstream. It has no
 * interaction cookie (that cookie's path is the interaction's), so it only finds the interaction
 * the state belongs to and sends the browser on to that interaction's page with the same query;
 * there the state is taken and everything is checked. An unknown state counts as a failure of
 * the client address (checked first, counted after: a state is not guessable, so a few parallel
 * requests past the limit gain nothing).
 */
export async function continueFromCallback(
  ctx: FederationContext,
  slug: string,
  search: URLSearchParams,
  ip: string | null,
): Promise<{ kind: "next"; to: string } | { kind: "unknown" } | RateLimited> {
  const limits: Array<[LimitName, string | null]> = [["federatedLoginIp", ip]];
  const limit = await checkFailures(ctx, limits);
  if (!limit.allowed) return { kind: "rate_limited", retryAfterSeconds: limit.retryAfterSeconds };
  const organization = await getOrganizationBySlug(ctx.db, ctx.cache, slug);
  if (!organization || organization.status !== "active") return { kind: "unknown" };
  const uid = await interactionOfState(ctx, organization.id, search.get("state") ?? "");
  if (!uid) {
    await consumeEach(ctx.limits, limits);
    // A forged, replayed or expired answer: there is no interaction (so no client), only the organization and the client address.
    await ctx.transaction(async (tx) => {
      tx.audit({ eventType: "auth.login.failure", organizationId: organization.id, data: { method: "federated", reason: "invalid_state" } });
    });
    return { kind: "unknown" };
  }
  const next = new URLSearchParams();
  for (const name of ["code", "state", "iss", "error", "error_description", "session_state", "user"]) {
    const value = search.get(name);
    if (value !== null) next.set(name, value.slice(0, 4096));
  }
  return { kind: "next", to: `/interaction/${encodeURIComponent(uid)}/federated/return?${next}` };
}

/** Home-realm discovery: the sign-in at the provider that claims the email's domain, or null when none does. */
export async function startForEmail(ctx: FederationContext, ic: InteractionContext, email: string, ip: string | null): Promise<StartOutcome | null> {
  if (!ic.methods.includes("federated")) return null;
  const provider = await providerForEmail(ctx.db, ic.organization.id, email);
  if (!provider) return null;
  return startFederatedSignIn(ctx, ic, { providerId: provider.id, loginHint: email, ip });
}

/** The login page's buttons (enabled providers) and whether typing an email can find one (home-realm discovery). */
export async function loginPageProviders(ctx: FederationContext, ic: InteractionContext): Promise<{ providers: Array<{ id: string; name: string }>; discovery: boolean }> {
  if (!ic.methods.includes("federated")) return { providers: [], discovery: false };
  const rows = await enabledProviders(ctx.db, ic.organization.id);
  return { providers: rows.map(({ id, name }) => ({ id, name })), discovery: rows.some((r) => r.domains.length > 0) };
}
