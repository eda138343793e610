import { decodeJwt, decodeProtectedHeader } from "jose";
import { errors, type Client, type ClientMetadata, type KoaContextWithOIDC } from "oidc-provider";
import type { ClientRecord } from "../../directory/clients";
import { LIFETIMES } from "../provider/lifetimes";
import { createLoadExistingGrant, type Grant } from "../storage/grants";
import type { Feature } from "../feature";
import { TOKEN_EXCHANGE_AUDIENCES_PROPERTY } from "./token-exchange";

/**
 * What an operator sets per client beyond the protocol's own metadata (decision 036): browser
 * origins allowed to call the token endpoints, consent skipped for a first-party client, and the
 * client's own token lifetimes. They travel in the provider's client metadata under these
 * names (registered as extraClientMetadata), because the provider asks its CORS and lifetime
 * questions synchronously, with the client instance in hand and nothing to look up.
 */
export const CLIENT_POLICY_PROPERTIES = ["porta_cors_origins", "porta_skip_consent", "porta_pkce", "porta_access_token_ttl", "porta_refresh_token_ttl", TOKEN_EXCHANGE_AUDIENCES_PROPERTY] as const;

/** Partial: a client record cached (Redis) before these columns existed has none of them. */
type PolicyRecord = Partial<Pick<ClientRecord, "allowedCorsOrigins" | "skipConsent" | "pkce" | "accessTokenTtlSeconds" | "refreshTokenTtlSeconds" | "tokenExchangeAudiences">>;

/** The policy part of a client's metadata; a setting left at its default is left out. */
export function clientPolicyMetadata(client: PolicyRecord): Partial<ClientMetadata> {
  return {
    ...(client.allowedCorsOrigins?.length ? { porta_cors_origins: client.allowedCorsOrigins } : {}),
    ...(client.skipConsent ? { porta_skip_consent: true } : {}),
    // PKCE (decision 073); inherit (the organization's mode) is left out.
    ...(client.pkce === "required" || client.pkce === "not_required" ? { porta_pkce: client.pkce } : {}),
    ...(typeof client.accessTokenTtlSeconds === "number" ? { porta_access_token_ttl: client.accessTokenTtlSeconds } : {}),
    ...(typeof client.refreshTokenTtlSeconds === "number" ? { porta_refresh_token_ttl: client.refreshTokenTtlSeconds } : {}),
    // Token exchange (decision 053): the audiences it may exchange for; the grant type follows (storage/client-metadata.ts).
    ...(client.tokenExchangeAudiences?.length ? { [TOKEN_EXCHANGE_AUDIENCES_PROPERTY]: client.tokenExchangeAudiences } : {}),
  };
}

const seconds = (value: unknown, fallback: number) => (typeof value === "number" && Number.isSafeInteger(value) && value > 0 ? value : fallback);

/** The client's access token lifetime, or the organization's. */
export const accessTokenTtlOf = (client: Client | undefined, fallback: number) => seconds(client?.["porta_access_token_ttl"], fallback);

/** The client's refresh token lifetime, or the default. */
export const refreshTokenTtlOf = (client: Client | undefined, fallback: number) => seconds(client?.["porta_refresh_token_ttl"], fallback);

/** A browser at `origin` may call the token endpoints as this client: an origin of a redirect URI, or one the operator allowed. */
export function corsAllowed(origin: string, client: Client): boolean {
  const allowed = client["porta_cors_origins"];
  if (Array.isArray(allowed) && allowed.includes(origin)) return true;
  return client.redirectUris?.some((uri) => URL.canParse(uri) && new URL(uri).origin === origin) ?? false;
}

/**
 * A client its operator marked first party. The consent prompt still comes when the request
 * asks for it (prompt=consent, which offline_access needs): the login page then records the
 * consent without showing it. Web clients only, as the settings require.
 */
export const skipsConsent = (client: Pick<ClientRecord, "skipConsent" | "applicationType">) => client.skipConsent && client.applicationType === "web";

/** Why a client must send PKCE; undefined when it need not. */
export type PkceRule = "public" | "client" | "organization";

/**
 * PKCE of an authorization request (decision 073): a public client always sends it; a
 * confidential one as its setting says, or, when it inherits, as the organization's OAuth 2.1
 * mode says (decision 052).
 */
export function pkceRuleOf(client: Client, oauth21: boolean): PkceRule | undefined {
  if (client.clientAuthMethod === "none") return "public";
  const setting = client["porta_pkce"];
  if (setting === "required") return "client";
  if (setting === "not_required") return undefined;
  return oauth21 ? "organization" : undefined;
}

const MUST_SEND_PKCE = "this client must send PKCE (code_challenge, S256)";
const CHANGE_IT = "an administrator can change the client's PKCE setting";

/** The refusal's error_description: which rule applies and where it can be changed. */
export const PKCE_REFUSALS: Record<PkceRule, string> = {
  public: `${MUST_SEND_PKCE}: it is a public client, and public clients always do`,
  client: `${MUST_SEND_PKCE}: the client's PKCE setting is required; ${CHANGE_IT}`,
  organization: `${MUST_SEND_PKCE}: the organization requires it of every client (OAuth 2.1 mode); ${CHANGE_IT}`,
};

/**
 * The provider's `pkce.required`, which it asks only about a code request without a
 * code_challenge: the refusal is thrown here, because the provider's own says only that its
 * "policy requires PKCE", which leaves a developer nowhere to go.
 */
export function requirePkceOf(oauth21: boolean) {
  return (_ctx: KoaContextWithOIDC, client: Client): boolean => {
    const rule = pkceRuleOf(client, oauth21);
    if (rule) throw new errors.InvalidRequest(PKCE_REFUSALS[rule]);
    return false;
  };
}

const words = (value: unknown) => (typeof value === "string" ? value.split(" ").filter(Boolean) : []);

/**
 * The scope the client itself sent: the query or form the provider read its parameters from, or,
 * for a pushed request, what the provider stored when it was pushed (an unsecured JWT of the
 * checked parameters; a pushed request object is the client's own, signed). Undefined for a
 * request object (JAR), whose parameters are the client's signed ones.
 */
function requestedScope(ctx: KoaContextWithOIDC): string[] | undefined {
  const pushed = (ctx.oidc.entities as { PushedAuthorizationRequest?: { request?: unknown } }).PushedAuthorizationRequest?.request;
  if (typeof pushed === "string") return decodeProtectedHeader(pushed).alg === "none" ? words(decodeJwt(pushed)["scope"]) : undefined;
  const original = (ctx.method === "POST" ? ctx.oidc.body : ctx.query) as Record<string, unknown> | undefined;
  if (!original || original["request"] !== undefined || original["request_uri"] !== undefined) return undefined;
  return words(original["scope"]);
}

/**
 * offline_access for a first-party client without prompt=consent (decision 073). oidc-provider
 * drops the scope from any authorization request without prompt=consent, as OpenID Connect Core
 * §11 says "unless other conditions for processing the request permitting offline access to the
 * requested resources are in place". A first-party client is such a condition: its operator
 * granted it everything it asks for (skip-consent), and it would never show the consent page the
 * prompt asks for. So, after the provider's checks, the scope is put back when the request asked
 * for it, the response includes a code, the client has the refresh_token grant and may ask for
 * the scope. Registered as the validator of the `scope` parameter (`extraParams`), which the
 * provider runs after its own checks of the authorization and pushed authorization request.
 * A request object (JAR) keeps the provider's rule.
 * Third-party clients keep the rule: offline_access needs prompt=consent and the consent page.
 */
export function keepOfflineAccessOfFirstParty(ctx: KoaContextWithOIDC, _scope: string | undefined, client: Client): void {
  const { route, params } = ctx.oidc;
  if ((route !== "authorization" && route !== "pushed_authorization_request") || !params || client["porta_skip_consent"] !== true) return;
  if (!requestedScope(ctx)?.includes("offline_access")) return;
  const scopes = words(params["scope"]);
  if (scopes.includes("offline_access") || !words(params["response_type"]).includes("code")) return;
  if (!client.grantTypeAllowed("refresh_token") || (client.scope !== undefined && !words(client.scope).includes("offline_access"))) return;
  params["scope"] = [...scopes, "offline_access"].join(" ");
}

type LoadExistingGrant = (ctx: KoaContextWithOIDC) => Promise<Grant | undefined>;

/**
 * For a first-party client (skip-consent), the grant the authorization continues holds everything
 * it asks for, so the provider's consent prompt finds nothing missing and never shows. The grant
 * is this sign-in's own (or a new one for it), as `loadExistingGrant` gives it; only what is
 * missing is added. Native clients cannot skip consent (the settings refuse it; RFC 8252 §8.6).
 * For any client, the scopes of an API resource that needs no consent (`consentFree`, its
 * identifiers; decision 077) are added the same way: the administrator's grant to the client
 * stands for the person's consent.
 */
export function withSkipConsent(load: LoadExistingGrant, consentFree: ReadonlySet<string> = new Set()): LoadExistingGrant {
  return async (ctx) => {
    const existing = await load(ctx);
    const { client, session, provider } = ctx.oidc;
    const accountId = session?.accountId;
    if (!client || !accountId) return existing;
    const firstParty = client["porta_skip_consent"] === true;
    const resources = Object.entries(ctx.oidc.resourceServers ?? {}).filter(([indicator]) => firstParty || consentFree.has(indicator));
    if (!firstParty && resources.length === 0) return existing;
    const grant = existing ?? new provider.Grant({ accountId, clientId: client.clientId });
    // A first-party client's sign-in always has a grant; another client's only when something was added.
    let changed = firstParty && !existing;

    if (firstParty) {
      const scopes = new Set(grant.getOIDCScopeEncountered().split(" "));
      const missingScopes = [...ctx.oidc.requestParamOIDCScopes].filter((scope) => !scopes.has(scope));
      if (missingScopes.length > 0) grant.addOIDCScope(missingScopes.join(" "));
      const claims = new Set(grant.getOIDCClaimsEncountered());
      const missingClaims = [...ctx.oidc.requestParamClaims].filter((claim) => !claims.has(claim));
      if (missingClaims.length > 0) grant.addOIDCClaims(missingClaims);
      changed ||= missingScopes.length > 0 || missingClaims.length > 0;
    }

    for (const [indicator, resourceServer] of resources) {
      const granted = new Set(grant.getResourceScopeEncountered(indicator).split(" "));
      const missing = [...ctx.oidc.requestParamScopes].filter((scope) => resourceServer.scopes.has(scope) && !granted.has(scope));
      if (missing.length > 0) grant.addResourceScope(indicator, missing.join(" "));
      changed ||= missing.length > 0;
    }
    if (!changed) return existing;
    await grant.save();
    return grant;
  };
}

/**
 * Per-client policy in the provider's configuration: the properties in the client metadata, the
 * client's token lifetimes, PKCE (public clients always; others by their setting, or in OAuth 2.1
 * mode: decisions 052, 073; S256 is the only method), consent skipped for a first-party client
 * and its offline_access without prompt=consent, and CORS per client.
 */
export const clientPolicy: Feature = {
  name: "client-policy",
  configuration: ({ organization, sql, accessTokenTtl, apiResources }) => ({
    // They come from Porta's own store, already checked.
    extraClientMetadata: { properties: [...CLIENT_POLICY_PROPERTIES] },
    ttl: {
      // The resource's lifetime first (features/api-resources.ts gives the client's where the resource has none).
      AccessToken: (_ctx, token, client) => token.resourceServer?.accessTokenTTL ?? accessTokenTtlOf(client, accessTokenTtl),
      ClientCredentials: (_ctx, token, client) => token.resourceServer?.accessTokenTTL ?? accessTokenTtlOf(client, accessTokenTtl),
      RefreshToken: (_ctx, _token, client) => refreshTokenTtlOf(client, LIFETIMES.RefreshToken),
    },
    pkce: { required: requirePkceOf(organization.oauth21) },
    loadExistingGrant: withSkipConsent(
      createLoadExistingGrant(sql, organization.id),
      new Set((apiResources ?? []).filter((resource) => !resource.consentRequired).map((resource) => resource.identifier)),
    ),
    extraParams: { scope: keepOfflineAccessOfFirstParty },
    clientBasedCORS(_ctx, origin, client) {
      return corsAllowed(origin, client);
    },
  }),
};
