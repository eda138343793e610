/**
 * The single module that reaches into oidc-provider beyond its documented configuration.
 * Each patch is small, applied per provider instance, and covered by a protocol test.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import type Provider from "oidc-provider";
import { errors } from "oidc-provider";
import { requestScope } from "../../request-scope";

interface ClientPrototype {
  clientId: string;
  compareClientSecret(this: ClientPrototype, actual: string): Promise<boolean>;
  responseModeAllowed(this: ClientPrototype, responseMode: string | undefined, responseType: string | undefined, fapiProfile: unknown): boolean;
}

interface AccessTokenLike {
  aud?: string | string[];
}

type FindFn = (this: unknown, ...args: unknown[]) => Promise<AccessTokenLike | undefined>;

/**
 * Client secrets are stored hashed, so the provider cannot compare them itself; its
 * comparison is replaced by one against the client's active secret hashes.
 */
export function useHashedClientSecrets(provider: Provider, verify: (clientId: string, presented: string) => Promise<boolean>) {
  const prototype = (provider.Client as unknown as { prototype: ClientPrototype }).prototype;
  prototype.compareClientSecret = function (actual: string) {
    return verify(this.clientId, actual);
  };
}

/** What a request for another response type than code is told: the provider's own "unsupported response_type requested" names no way forward. */
export const ONLY_CODE_RESPONSE_TYPE = "only response_type=code is supported (the authorization code flow); ask for response_type=code";

/**
 * The provider checks the response mode of an authorization request (PAR included) with the
 * client in hand just before it checks the response type, and refuses an unsupported type with
 * "unsupported response_type requested". Libraries that default to `id_token` (express-openid-
 * connect) report that only as "invalid response encountered", so a request for any type but
 * `code` is refused here first, with the same error code and a description that says what to ask
 * for. The refusal goes to the redirect URI as the provider's own would.
 */
export function explainUnsupportedResponseTypes(provider: Provider, supported: readonly string[]) {
  const prototype = (provider.Client as unknown as { prototype: ClientPrototype }).prototype;
  const original = prototype.responseModeAllowed;
  prototype.responseModeAllowed = function (responseMode, responseType, fapiProfile) {
    if (typeof responseType === "string") {
      const normalized = [...new Set(responseType.split(" "))].sort().join(" ");
      if (!supported.includes(normalized)) throw new errors.UnsupportedResponseType(ONLY_CODE_RESPONSE_TYPE);
    }
    return original.call(this, responseMode, responseType, fapiProfile);
  };
}

/**
 * Access tokens are JWTs for the organization's own resource (audience = issuer), or for the
 * Admin API (decision 017), which oidc-provider's userinfo endpoint would refuse for carrying an
 * audience. For userinfo requests only, a token whose audience is exactly one of these
 * resources of Porta's own is treated as audience-free.
 */
export function acceptOwnAudienceAtUserinfo(provider: Provider, audiences: string[]) {
  const model = provider.AccessToken as unknown as { find: FindFn };
  const original = model.find;
  model.find = async function (this: unknown, ...args: unknown[]) {
    const token = await original.apply(this, args);
    if (token && requestScope()?.userinfo) {
      const aud = Array.isArray(token.aud) && token.aud.length === 1 ? token.aud[0] : token.aud;
      if (typeof aud === "string" && audiences.includes(aud)) token.aud = undefined;
    }
    return token;
  };
}

interface SavedToken {
  save(this: SavedToken): Promise<string>;
}

interface IdTokenPrototype {
  ctx?: { oidc?: { entities?: { AccessToken?: object } } };
  extra: Record<string, unknown>;
  set(key: string, value: unknown): void;
  issue(this: IdTokenPrototype, options?: { use?: string }): Promise<string>;
}

/**
 * `at_hash` in every ID token issued beside an access token (OpenID Connect Core §3.1.3.6; the
 * provider adds it only at the authorization endpoint, and Porta issues ID tokens at the token
 * endpoint only): the access token's value is remembered when it is saved, and the ID token of
 * the same request carries its hash, which the provider computes for the signing algorithm.
 */
export function hashAccessTokenIntoIdToken(provider: Provider) {
  const issued = new WeakMap<object, string>();
  const accessToken = (provider.AccessToken as unknown as { prototype: SavedToken }).prototype;
  const save = accessToken.save;
  accessToken.save = async function (this: SavedToken) {
    const value = await save.call(this);
    issued.set(this, value);
    return value;
  };
  const idToken = (provider.IdToken as unknown as { prototype: IdTokenPrototype }).prototype;
  const issue = idToken.issue;
  idToken.issue = function (this: IdTokenPrototype, options) {
    const token = this.ctx?.oidc?.entities?.AccessToken;
    const value = token ? issued.get(token) : undefined;
    if (options?.use === "idtoken" && value && this.extra.at_hash === undefined) this.set("at_hash", value);
    return issue.call(this, options);
  };
}

interface IssuedToken {
  jti: string;
  kind: string;
  exp?: number;
  constructor: { IN_PAYLOAD: string[] };
  adapter: { upsert(id: string, payload: Record<string, unknown>, expiresIn: number): Promise<unknown> };
}

/**
 * oidc-provider issues JWT access tokens without storing them, which would leave them outside
 * userinfo, introspection, revocation and grant revocation. Registered as the JWT format
 * customizer (awaited before signing), this stores each one under its `jti` through the
 * model's own adapter (PostgreSQL for AccessToken, the ephemeral store for ClientCredentials).
 */
export async function storeJwtAccessToken(token: unknown, jwtPayload: Record<string, unknown>): Promise<void> {
  const issued = token as IssuedToken;
  const source = token as Record<string, unknown>;
  const payload: Record<string, unknown> = { kind: issued.kind };
  for (const key of issued.constructor.IN_PAYLOAD) {
    if (key !== "format" && source[key] !== undefined) payload[key] = source[key];
  }
  payload.iat = jwtPayload.iat;
  payload.exp = jwtPayload.exp;
  const expiresIn = Math.max(1, Number(jwtPayload.exp) - Math.floor(Date.now() / 1000));
  await issued.adapter.upsert(issued.jti, payload, expiresIn);
}

/** The part of the provider's browser session the account page reads. */
export interface BrowserSession {
  /** The session id: the value of the session cookie (stored only hashed, adapter.ts). */
  id: string;
  accountId: string | undefined;
  /** auth_time: when the person last proved who they are in this browser. */
  loginTs: number | undefined;
  amr: string[] | undefined;
}

interface SessionModel {
  get(ctx: { req: IncomingMessage; res: ServerResponse }): Promise<{ jti: string; accountId?: string; loginTs?: number; amr?: string[] }>;
}

/**
 * The provider's session of the browser that sent `req`, read outside the provider's own routes
 * (the account page) with the provider's own check of the signed session cookie. oidc-provider
 * documents `Session.get` for its own middleware only.
 */
export async function browserSessionOf(provider: Provider, req: IncomingMessage, res: ServerResponse): Promise<BrowserSession> {
  const session = await (provider.Session as unknown as SessionModel).get({ req, res });
  return { id: session.jti, accountId: session.accountId, loginTs: session.loginTs, amr: session.amr };
}
