/**
 * Every change Porta makes to a built oidc-provider beyond its documented configuration is applied
 * here, and only here (oidc/features.test.ts holds the code to it): Porta's own patches below, and
 * each feature's from its module in features/ (FEATURES), in one fixed order. Each patch is small,
 * applied per provider instance, and covered by a protocol test.
 */
import type { EventEmitter } from "node:events";
import type Provider from "oidc-provider";
import { errors } from "oidc-provider";
import { isDatabaseUnavailable } from "../../db/errors";
import { RETRY_AFTER_SECONDS } from "../../errors";
import { requestScope } from "../../request-scope";
import { UNAVAILABLE_BODY } from "../edge/unavailable";
import { FEATURES } from "../features";
import type { PatchContext } from "../feature";
import { RESPONSE_TYPES } from "./configuration";

/**
 * Applies every patch to a provider just built, before it serves: Porta's own, then each
 * feature's, then the answer of 503 for an absent database, which, registered last, sits closest
 * to the provider's own routes.
 */
export function applyPatches(provider: Provider, context: PatchContext): void {
  useHashedClientSecrets(provider, context.clientSecretMatches);
  acceptOwnAudienceAtUserinfo(provider, context.adminApiResource ? [context.issuer, context.adminApiResource] : [context.issuer]);
  answerTokenErrorsPerRfc6749(provider);
  explainUnsupportedResponseTypes(provider, RESPONSE_TYPES);
  hashAccessTokenIntoIdToken(provider);
  for (const patch of FEATURES.flatMap((feature) => feature.patches ?? [])) patch(provider, context);
  const { logger, organization } = context;
  answerUnavailableAs503(provider, (error) => logger.error({ err: error, organizationId: organization.id }, "oidc server error"), (status) =>
    logger.warn({ organizationId: organization.id, status }, `database unavailable: a protocol request answered ${status}`),
  );
}

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
function useHashedClientSecrets(provider: Provider, verify: (clientId: string, presented: string) => Promise<boolean>) {
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
function explainUnsupportedResponseTypes(provider: Provider, supported: readonly string[]) {
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
function acceptOwnAudienceAtUserinfo(provider: Provider, audiences: string[]) {
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
function hashAccessTokenIntoIdToken(provider: Provider) {
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

/**
 * Error codes of the token endpoint as RFC 6749 §5.2 names them, where oidc-provider's differ: a
 * client asking for a grant type it is not registered for is `unauthorized_client` ("the
 * authenticated client is not authorized to use this authorization grant type"), which the
 * library reports as `invalid_request`. Matched on the library's own description so that any
 * other invalid_request stays one; test/oidc/post-methods.test.ts notices if an upgrade changes it.
 */
const GRANT_TYPE_NOT_ALLOWED = "requested grant type is not allowed for this client";
/** The same refusal at the device authorization endpoint (RFC 8628 §3.2 answers with RFC 6749 §5.2's codes). */
const DEVICE_GRANT_NOT_ALLOWED = "urn:ietf:params:oauth:grant-type:device_code is not allowed for this client";

function answerTokenErrorsPerRfc6749(provider: Provider): void {
  provider.use(async (ctx, next) => {
    await next();
    const route = ctx.oidc?.route;
    if (ctx.status !== 400 || (route !== "token" && route !== "device_authorization")) return;
    const body = ctx.body as { error?: unknown; error_description?: unknown } | undefined;
    const refusal = route === "token" ? GRANT_TYPE_NOT_ALLOWED : DEVICE_GRANT_NOT_ALLOWED;
    if (body && body.error === "invalid_request" && body.error_description === refusal) {
      ctx.body = { ...body, error: "unauthorized_client" };
    }
  });
}

/**
 * The provider reports every unexpected error as `server_error`; those caused by the database
 * are remembered per request and turned into a 503 on the way out. So is one thrown past the
 * provider's own error handlers: it saves the browser's session after it has answered, outside
 * them, so a database that went away meanwhile would otherwise reach Koa, which answers 500.
 * The 503 is logged once it is the answer, so the log never names a status that was not sent.
 * Other errors keep the provider's answer and are logged as before; one that escapes the
 * provider entirely is logged here too (Koa would print it to stderr with its stack).
 */
function answerUnavailableAs503(provider: Provider, logServerError: (error: unknown) => void, logUnavailable: (status: number) => void): void {
  const unavailable = new WeakSet<object>();
  provider.on("server_error", (ctx: object, error: unknown) => {
    if (isDatabaseUnavailable(error)) unavailable.add(ctx);
    else logServerError(error);
  });
  // The provider is the Koa application; Koa's "error" event is not in the provider's typed events.
  (provider as unknown as EventEmitter).on("error", (error: unknown) => {
    // Koa's own answer to an error nobody handled: a 4xx it exposes is the request's fault, not Porta's.
    const status = (error as { status?: unknown }).status;
    if (typeof status !== "number" || status >= 500) logServerError(error);
  });
  provider.use(async (ctx, next) => {
    let thrown = false;
    try {
      await next();
    } catch (error) {
      if (!isDatabaseUnavailable(error)) throw error;
      unavailable.add(ctx);
      thrown = true;
    }
    if (!unavailable.has(ctx)) return;
    if (thrown || ctx.status === 500) {
      ctx.status = 503;
      ctx.remove("Location");
      ctx.set("Retry-After", String(RETRY_AFTER_SECONDS));
      ctx.set("Cache-Control", "no-store");
      // JSON endpoints get the OAuth error body; a page the provider rendered (authorize) keeps its HTML.
      if (typeof ctx.body !== "string" || !ctx.response.is("html")) ctx.body = UNAVAILABLE_BODY;
    }
    logUnavailable(ctx.status);
  });
}
