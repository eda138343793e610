import { hkdfSync } from "node:crypto";
import { createLocalJWKSet, jwtVerify, type JWTPayload } from "jose";
import type { Configuration, KoaContextWithOIDC, ResponseType } from "oidc-provider";
import { errors, interactionPolicy } from "oidc-provider";
import type { Organization, PrismaClient } from "~/generated/prisma/client";
import type { Database } from "../../db/client";
import { isAdminApiClient } from "../../admin/api-access";
import { ADMIN_CLIENT_ID } from "../../admin/permissions";
import type { ReadThroughCache } from "../../cache/read-through";
import type { KeyValueStore } from "../../cache/store";
import { getClientRecord } from "../../directory/clients";
import { createFindAccount } from "./account";
import { createAdapterFactory } from "../storage/adapter";
import type { RevokedTokens } from "../storage/revoked-tokens";
import { createClientAdapter } from "../storage/client-metadata";
import { accessTokenTtlOf, CLIENT_POLICY_PROPERTIES, corsAllowed, keepOfflineAccessOfFirstParty, refreshTokenTtlOf, requirePkceOf, withSkipConsent } from "../features/client-policy";
import { createLoadExistingGrant } from "../storage/grants";
import { storeJwtAccessToken } from "./patches";
import type { PrivateSigningJwk } from "./keys";
import { LIFETIMES } from "./lifetimes";
import { ACR, ACR_VALUES, stepUpRequested } from "../features/acr";
import { refuseUnknownClientCredentialsScopes } from "./token-errors";
import { JWKS_URI_MAX_BYTES, outboundFetch } from "../../outbound/guard";
import { providerPages } from "../edge/pages";
import { PROVIDER_ROUTES } from "../edge/endpoints";
import { exchangedTokenClaims } from "../features/token-exchange";
import { registrationPolicyOf } from "~/schemas/registration";
import { registrationEndpointOf } from "../../registration/paths";
import { keepSessionOfShownForm } from "../features/device-flow";

export const BASE_SCOPES = ["openid", "offline_access", "profile", "email", "roles"] as const;
/**
 * The built-in scopes all ask for something of a user (an ID token, claims, a refresh token of a
 * user's grant): client_credentials refuses them. An organization's own claim scopes may double
 * as an API's scopes and stay allowed there (decision 071).
 */
const USER_SCOPES: ReadonlySet<string> = new Set(BASE_SCOPES);

const STANDARD_CLAIMS: Record<string, string[]> = {
  // How and when the user signed in (RFC 8176 amr, the acr it gives) travel in every ID token.
  openid: ["sub", "acr", "amr", "auth_time"],
  profile: ["name", "given_name", "family_name", "locale", "updated_at"],
  email: ["email", "email_verified"],
  roles: ["roles"],
};

const PROTOCOL_CLAIMS = { acr: null, amr: null, auth_time: null, sid: null } as const;

export interface ProviderInput {
  organization: Organization;
  issuer: string;
  jwks: PrivateSigningJwk[];
  /** Custom claim definitions of the organization's applications. */
  customClaims: Array<{ id: string; claimName: string; scope: string }>;
  encryptionKey: Buffer;
  /**
   * The Admin API as a resource, in the super-admin organization only: admin clients' access
   * tokens are for it unless they ask for another resource.
   */
  adminApiResource?: string | undefined;
  /** The claims of an access token JWT whose signature verifies, else undefined. */
  claimsOfSignedJwt(value: string): Promise<JWTPayload | undefined>;
  /** Seconds; the `tokens.accessTokenTtlSeconds` setting when the provider was built. */
  accessTokenTtl: number;
  prisma: PrismaClient;
  /** Plain SQL for the durable token and grant rows (adapter.ts). */
  sql: Pick<Database, "query">;
  cache: ReadThroughCache;
  store: KeyValueStore;
  revokedTokens: RevokedTokens;
  /** Outbound requests (a client's jwks_uri) may reach private addresses (OUTBOUND_ALLOW_PRIVATE_NETWORKS). */
  allowPrivateNetworks?: boolean;
}

const ES256_ONLY = ["ES256"];
/** The authorization code flow only: no implicit or hybrid response types (the product's rule). */
export const RESPONSE_TYPES: ResponseType[] = ["code"];

/** Cookie signing keys derived per organization, so that one tenant's cookies never verify at another. */
function cookieKeys(encryptionKey: Buffer, organizationId: string): string[] {
  return [Buffer.from(hkdfSync("sha256", encryptionKey, organizationId, "porta oidc cookies", 32)).toString("base64url")];
}

export function scopesAndClaims(customClaims: ProviderInput["customClaims"]) {
  const claims: Record<string, string[]> = Object.fromEntries(Object.entries(STANDARD_CLAIMS).map(([k, v]) => [k, [...v]]));
  for (const { claimName, scope } of customClaims) {
    const names = (claims[scope] ??= []);
    if (!names.includes(claimName)) names.push(claimName);
  }
  const scopes = [...new Set<string>([...BASE_SCOPES, ...Object.keys(claims)])];
  // Protocol claims oidc-provider must know as supported; the openid scope releases amr and auth_time.
  return { scopes, claims: { ...claims, ...PROTOCOL_CLAIMS } };
}

/**
 * oidc-provider's prompts, plus one login check: a session whose account can no longer be
 * found (deactivated or deleted since it signed in, or not of this organization) signs in
 * again, instead of the provider failing with a server error further on.
 */
function interactionPolicyOf() {
  const policy = interactionPolicy.base();
  policy.get("login")!.checks.add(
    new interactionPolicy.Check(
      "account_unavailable",
      "the signed-in account is no longer available",
      "login_required",
      (ctx) => Boolean(ctx.oidc.session?.accountId) && !ctx.oidc.account,
    ),
  );
  // A session of one factor does not answer a request that accepts only two (step-up,
  // oidc/features/acr.ts): the person signs in again and the sign-in asks for the second factor. Not
  // after the sign-in just made: it reached what it could, and the ID token's acr says so.
  policy.get("login")!.checks.add(
    new interactionPolicy.Check(
      "acr_step_up",
      "the request asks for a sign-in with two factors",
      "login_required",
      (ctx) =>
        Boolean(ctx.oidc.session?.accountId) && !ctx.oidc.result?.login && stepUpRequested(ctx.oidc.params) && ctx.oidc.session?.acr !== ACR.twoFactors,
    ),
  );
  return policy;
}
/** The same for every organization and only read by the providers: built once, not per provider build. */
const INTERACTION_POLICY = interactionPolicyOf();

/** oidc-provider configuration for one organization. Policy lives here, not in Express. */
export function buildProviderConfiguration(input: ProviderInput): Configuration {
  const { organization, issuer, prisma, sql, cache, store, revokedTokens } = input;
  const { scopes, claims } = scopesAndClaims(input.customClaims);
  const knownScopes = new Set(scopes);
  const adapterFor = createAdapterFactory({ sql, store, revokedTokens, organizationId: organization.id, claimsOfSignedJwt: input.claimsOfSignedJwt });
  const clientAdapter = createClientAdapter(prisma, cache, organization.id, issuer);
  const pages = providerPages(organization, issuer);
  // The session cookie of each organization lives under its own prefix, so two organizations on
  // one host never overwrite each other's session.
  const sessionCookie = { httpOnly: true, sameSite: "lax", path: `/${organization.slug}` } as const;
  const mayUseAdminApiResource = async (clientId: string) => {
    if (!input.adminApiResource) return false;
    const client = await getClientRecord(prisma, cache, clientId);
    return Boolean(client && isAdminApiClient(client));
  };

  return {
    adapter: (name: string) => (name === "Client" ? clientAdapter : adapterFor(name)),
    jwks: { keys: input.jwks },
    findAccount: createFindAccount({ prisma, cache, organizationId: organization.id, customClaims: input.customClaims }),
    scopes,
    claims,
    conformIdTokenClaims: false,
    acrValues: ACR_VALUES,
    responseTypes: RESPONSE_TYPES,
    clientDefaults: {
      grant_types: ["authorization_code"],
      response_types: ["code"],
      id_token_signed_response_alg: "ES256",
      // Signed introspection responses are sent only to callers that ask for them (Accept).
      introspection_signed_response_alg: "ES256",
      token_endpoint_auth_method: "client_secret_basic",
    },
    enabledJWA: {
      idTokenSigningAlgValues: ES256_ONLY,
      userinfoSigningAlgValues: ES256_ONLY,
      introspectionSigningAlgValues: ES256_ONLY,
      authorizationSigningAlgValues: ES256_ONLY,
      requestObjectSigningAlgValues: ES256_ONLY,
      clientAuthSigningAlgValues: ES256_ONLY,
      dPoPSigningAlgValues: ES256_ONLY,
    } as Configuration["enabledJWA"],
    clientAuthMethods: ["none", "client_secret_basic", "client_secret_post", "private_key_jwt"],
    fetch: outboundFetch(input.allowPrivateNetworks ?? false),
    fetchResponseBodyLimits: { jwks_uri: JWKS_URI_MAX_BYTES, sector_identifier_uri: JWKS_URI_MAX_BYTES, "client_id metadata document": 5 * 1024 },
    // Porta's per-client settings (client-policy.ts); they come from Porta's own store, already checked.
    extraClientMetadata: { properties: [...CLIENT_POLICY_PROPERTIES] },
    routes: PROVIDER_ROUTES,
    // Porta's own registration endpoint (registration/, decision 054), named only while it is open.
    discovery: registrationPolicyOf(organization.registrationPolicy).enabled ? { registration_endpoint: registrationEndpointOf(issuer) } : {},
    interactions: {
      policy: INTERACTION_POLICY,
      url: (_ctx: KoaContextWithOIDC, interaction) => `/interaction/${interaction.uid}`,
    },
    cookies: {
      keys: cookieKeys(input.encryptionKey, organization.id),
      long: sessionCookie,
      short: { httpOnly: true, sameSite: "lax" },
    },
    ttl: {
      ...LIFETIMES,
      AccessToken: (_ctx, _token, client) => accessTokenTtlOf(client, input.accessTokenTtl),
      ClientCredentials: (_ctx, _token, client) => accessTokenTtlOf(client, input.accessTokenTtl),
      RefreshToken: (_ctx, _token, client) => refreshTokenTtlOf(client, LIFETIMES.RefreshToken),
    },
    rotateRefreshToken: true,
    // Public clients always; others by their setting, or in OAuth 2.1 mode (decisions 052, 073). S256 is the only method.
    pkce: { required: requirePkceOf(organization.oauth21) },
    loadExistingGrant: withSkipConsent(createLoadExistingGrant(sql, organization.id)),
    // A first-party client gets offline_access without prompt=consent (client-policy.ts, decision 073).
    extraParams: { scope: keepOfflineAccessOfFirstParty },
    async issueRefreshToken(_ctx, client, code) {
      if (!client.grantTypeAllowed("refresh_token")) return false;
      // The shared admin client (CLI and console) always refreshes, as the spec's admin flow needs.
      return code.scopes.has("offline_access") || client.clientId === ADMIN_CLIENT_ID;
    },
    // An exchanged token's act (decision 053).
    extraTokenClaims(_ctx, token) {
      return exchangedTokenClaims(token);
    },
    clientBasedCORS(_ctx, origin, client) {
      return corsAllowed(origin, client);
    },
    renderError: pages.renderError,
    formats: {
      customizers: {
        async jwt(_ctx, token, jwt) {
          await storeJwtAccessToken(token, jwt.payload);
        },
      },
    },
    features: {
      devInteractions: { enabled: false },
      clientCredentials: { enabled: true },
      introspection: {
        enabled: true,
        // Confidential clients of this organization only; other tenants' tokens are simply unknown here.
        async allowedPolicy(_ctx, client) {
          return client.clientAuthMethod !== "none";
        },
      },
      jwtIntrospection: { enabled: true },
      jwtUserinfo: { enabled: true },
      revocation: { enabled: true },
      pushedAuthorizationRequests: { enabled: true },
      dPoP: { enabled: true },
      requestObjects: { enabled: true },
      rpInitiatedLogout: { enabled: true, logoutSource: pages.logoutSource, postLogoutSuccessSource: pages.postLogoutSuccessSource },
      // Logout tokens are queued and sent from a job (registry.ts, oidc/features/backchannel-logout.ts; decision 048).
      backchannelLogout: { enabled: true },
      // RFC 8628 for clients that have the grant type (decision 049); Porta's own pages (pages.ts).
      deviceFlow: {
        enabled: true,
        charset: "base-20",
        mask: "****-****",
        async userCodeInputSource(ctx, form, out, err) {
          if (err) await keepSessionOfShownForm(ctx, sessionCookie, LIFETIMES.Session);
          return pages.userCodeInputSource(ctx, form, out, err);
        },
        userCodeConfirmSource: pages.userCodeConfirmSource,
        successSource: pages.successSource,
      },
      userinfo: { enabled: true },
      resourceIndicators: {
        enabled: true,
        // Every access token is an ES256 JWT for this organization's own resource (its issuer),
        // or, for an admin client of the super-admin organization, for the Admin API; a client
        // may also name one of these resources itself.
        async defaultResource(_ctx, client, oneOf) {
          if (oneOf) return oneOf;
          return (await mayUseAdminApiResource(client.clientId)) ? input.adminApiResource : issuer;
        },
        async useGrantedResource() {
          return true;
        },
        async getResourceServerInfo(ctx, resourceIndicator, client) {
          refuseUnknownClientCredentialsScopes(ctx, knownScopes, USER_SCOPES);
          const known = resourceIndicator === issuer || (resourceIndicator === input.adminApiResource && (await mayUseAdminApiResource(client.clientId)));
          if (!known) throw new errors.InvalidTarget();
          const allowed = new Set((client.scope ?? scopes.join(" ")).split(" "));
          return {
            scope: scopes.filter((s) => allowed.has(s)).join(" "),
            audience: resourceIndicator,
            accessTokenFormat: "jwt",
            accessTokenTTL: accessTokenTtlOf(client, input.accessTokenTtl),
            jwt: { sign: { alg: "ES256" } },
          };
        },
      },
    },
  };
}

/** Verifies an access token JWT of this issuer against its published keys and returns its claims. */
export function createSignedJwtReader(issuer: string, jwks: PrivateSigningJwk[]) {
  const publicKeys = createLocalJWKSet({ keys: jwks.map(({ kty, crv, x, y, kid, alg, use }) => ({ kty, crv, x, y, kid, alg, use })) });
  return async (value: string): Promise<JWTPayload | undefined> => {
    try {
      const { payload } = await jwtVerify(value, publicKeys, { issuer, algorithms: ["ES256"], typ: "at+jwt" });
      return typeof payload.jti === "string" ? payload : undefined;
    } catch {
      return undefined;
    }
  };
}
