import { hkdfSync } from "node:crypto";
import { createLocalJWKSet, jwtVerify, type JWTPayload } from "jose";
import type { Configuration, KoaContextWithOIDC, ResponseType } from "oidc-provider";
import { interactionPolicy } from "oidc-provider";
import { ADMIN_CLIENT_ID } from "../../admin/permissions";
import { createFindAccount } from "./account";
import { createAdapterFactory } from "../storage/adapter";
import { createClientAdapter } from "../storage/client-metadata";
import { storeJwtAccessToken } from "../storage/jwt-access-tokens";
import { FEATURES } from "../features";
import type { PrivateSigningJwk } from "./keys";
import { LIFETIMES } from "./lifetimes";
import { JWKS_URI_MAX_BYTES, outboundFetch } from "../../outbound/guard";
import { providerPages } from "../edge/pages";
import type { ConfigurationFragment, FeatureInput, ProviderInput } from "../feature";
import { PROVIDER_ROUTES } from "../edge/endpoints";
import { IDP_INITIATED_COOKIE, parseIdpInitiatedMark } from "../../federation/idp-initiated-cookie";

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

const isPlainObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value) && Object.getPrototypeOf(value) === Object.prototype;

/**
 * The base configuration with each feature's fragment: a fragment's value replaces the base's,
 * and an object of settings (`features`, `ttl`…) is merged into the base's one, one level deep.
 * Two features that set the same thing would silently overrule each other: that is refused
 * when the provider is built.
 */
export function composeConfiguration(base: Configuration, fragments: ReadonlyArray<{ name: string; fragment: ConfigurationFragment }>): Configuration {
  const composed: Record<string, unknown> = { ...base };
  const setBy = new Map<string, string>();
  const claim = (name: string, key: string, whole: string = key) => {
    const earlier = setBy.get(key) ?? setBy.get(whole);
    if (earlier) throw new Error(`the features ${earlier} and ${name} both configure ${key}`);
    setBy.set(key, name);
  };
  for (const { name, fragment } of fragments) {
    for (const [key, value] of Object.entries(fragment)) {
      const current = composed[key];
      if (isPlainObject(value) && isPlainObject(current)) {
        const merged = { ...current };
        for (const [inner, innerValue] of Object.entries(value)) {
          claim(name, `${key}.${inner}`, key);
          merged[inner] = innerValue;
        }
        composed[key] = merged;
      } else {
        claim(name, key);
        composed[key] = value;
      }
    }
  }
  return composed as Configuration;
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
 * again, instead of the provider failing with a server error further on. The features' own
 * checks follow (step-up: features/acr.ts).
 */
function interactionPolicyOf() {
  const policy = interactionPolicy.base();
  const login = policy.get("login")!;
  login.checks.add(
    new interactionPolicy.Check(
      "account_unavailable",
      "the signed-in account is no longer available",
      "login_required",
      (ctx) => Boolean(ctx.oidc.session?.accountId) && !ctx.oidc.account,
    ),
  );
  // A browser that comes from an IdP-initiated SAML sign-in for this client signs in as the
  // person the IdP named, never silently as whoever its session holds (decision 083).
  login.checks.add(
    new interactionPolicy.Check(
      "saml_idp_initiated",
      "a sign-in started at the organization's SAML identity provider is waiting",
      "login_required",
      (ctx) => {
        const mark = parseIdpInitiatedMark(ctx.cookies.get(IDP_INITIATED_COOKIE, { signed: false }));
        return mark !== null && mark.clientId === ctx.oidc.client?.clientId;
      },
    ),
  );
  for (const check of FEATURES.flatMap((feature) => feature.loginChecks ?? [])) login.checks.add(check);
  return policy;
}
/** The same for every organization and only read by the providers: built once, not per provider build. */
const INTERACTION_POLICY = interactionPolicyOf();

/**
 * oidc-provider configuration for one organization: the base below, and what each feature adds
 * (features/index.ts). Policy lives here and in the features, not in Express.
 */
export function buildProviderConfiguration(input: ProviderInput): Configuration {
  const { organization, issuer, prisma, sql, cache, store, revokedTokens } = input;
  const { scopes, claims } = scopesAndClaims(input.customClaims);
  const adapterFor = createAdapterFactory({ sql, store, revokedTokens, organizationId: organization.id, claimsOfSignedJwt: input.claimsOfSignedJwt });
  const clientAdapter = createClientAdapter(prisma, cache, organization, issuer, input.clientDocuments);
  const pages = providerPages(organization, issuer);
  // The session cookie of each organization lives under its own prefix, so two organizations on
  // one host never overwrite each other's session.
  const sessionCookie = { httpOnly: true, sameSite: "lax", path: `/${organization.slug}` } as const;

  const featureInput: FeatureInput = { ...input, pages, sessionCookie, scopes, userScopes: USER_SCOPES };

  const base: Configuration = {
    adapter: (name: string) => (name === "Client" ? clientAdapter : adapterFor(name)),
    jwks: { keys: input.jwks },
    findAccount: createFindAccount({ prisma, cache, organizationId: organization.id, customClaims: input.customClaims }),
    scopes,
    claims,
    conformIdTokenClaims: false,
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
    routes: PROVIDER_ROUTES,
    interactions: {
      policy: INTERACTION_POLICY,
      url: (_ctx: KoaContextWithOIDC, interaction) => `/interaction/${interaction.uid}`,
    },
    cookies: {
      keys: cookieKeys(input.encryptionKey, organization.id),
      long: sessionCookie,
      short: { httpOnly: true, sameSite: "lax" },
    },
    // The access token's and refresh token's are each client's (features/client-policy.ts).
    ttl: { ...LIFETIMES },
    rotateRefreshToken: true,
    async issueRefreshToken(_ctx, client, code) {
      if (!client.grantTypeAllowed("refresh_token")) return false;
      // The shared admin client (CLI and console) always refreshes, as the spec's admin flow needs.
      return code.scopes.has("offline_access") || client.clientId === ADMIN_CLIENT_ID;
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
      userinfo: { enabled: true },
    },
  };
  return composeConfiguration(base, FEATURES.flatMap((feature) => (feature.configuration ? [{ name: feature.name, fragment: feature.configuration(featureInput) }] : [])));
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
