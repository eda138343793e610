import { errors, type KoaContextWithOIDC } from "oidc-provider";
import type Provider from "oidc-provider";

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

export function answerTokenErrorsPerRfc6749(provider: Provider): void {
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
 * RFC 6749 §5.2 `invalid_scope` for a client_credentials request naming a scope that names a user
 * (`userScopes`), or (`unknown`) a scope the
 * organization does not have. oidc-provider refuses only the scopes it knows and the client may
 * not use; an unknown one it drops, answering with a token of no scope and no `scope` parameter,
 * which §3.3 forbids when the issued scope differs from the requested one. (At the authorization
 * endpoint unknown scopes stay ignored, as OpenID Connect Core §3.1.2.1 says.)
 */
export function refuseUnknownClientCredentialsScopes(ctx: KoaContextWithOIDC, known: ReadonlySet<string>, userScopes: ReadonlySet<string>): void {
  if (ctx.oidc.route !== "token" || ctx.oidc.params?.grant_type !== "client_credentials") return;
  const requested = typeof ctx.oidc.params.scope === "string" ? ctx.oidc.params.scope.split(" ").filter(Boolean) : [];
  const unknown = requested.find((scope) => !known.has(scope));
  if (unknown !== undefined) throw new errors.InvalidScope("requested scope is not known", unknown);
  // A client acting for itself has no user: a scope that asks for one (an ID token, a user's
  // claims, a refresh token for a user's grant) would only put a promise in the token that nothing
  // keeps (decision 071).
  const personal = requested.find((scope) => userScopes.has(scope));
  if (personal !== undefined) throw new errors.InvalidScope("requested scope names a user, which client_credentials has none of", personal);
}
