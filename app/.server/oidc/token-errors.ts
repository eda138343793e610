import type Provider from "oidc-provider";

/**
 * Error codes of the token endpoint as RFC 6749 §5.2 names them, where oidc-provider's differ: a
 * client asking for a grant type it is not registered for is `unauthorized_client` ("the
 * authenticated client is not authorized to use this authorization grant type"), which the
 * library reports as `invalid_request`. Matched on the library's own description so that any
 * other invalid_request stays one; test/oidc/post-methods.test.ts notices if an upgrade changes it.
 */
const GRANT_TYPE_NOT_ALLOWED = "requested grant type is not allowed for this client";

export function answerTokenErrorsPerRfc6749(provider: Provider): void {
  provider.use(async (ctx, next) => {
    await next();
    if (ctx.status !== 400 || ctx.oidc?.route !== "token") return;
    const body = ctx.body as { error?: unknown; error_description?: unknown } | undefined;
    if (body && body.error === "invalid_request" && body.error_description === GRANT_TYPE_NOT_ALLOWED) {
      ctx.body = { ...body, error: "unauthorized_client" };
    }
  });
}
