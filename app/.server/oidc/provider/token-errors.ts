import { errors, type KoaContextWithOIDC } from "oidc-provider";

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
