import { PortaAuthenticationError, connectionErrorOf, errorFromResponse } from "../core/errors.js";

/** What Porta's token endpoint answers (RFC 6749 §5.1). */
export interface TokenResponse {
  access_token: string;
  token_type: string;
  expires_in?: number;
  refresh_token?: string;
  id_token?: string;
  scope?: string;
}

/**
 * Porta serves the token endpoint at both `{issuer}/auth/token` (canonical, in discovery) and
 * `{issuer}/token` (the alias this library's helpers were first written against); either works.
 */
export function tokenEndpointOf(issuer: string): string {
  return `${issuer.replace(/\/+$/, "")}/token`;
}

export async function requestToken(
  endpoint: string,
  form: Record<string, string>,
  options: { basicAuth?: { clientId: string; clientSecret: string }; signal?: AbortSignal | undefined; fetch?: typeof fetch } = {},
): Promise<TokenResponse> {
  const headers: Record<string, string> = { "content-type": "application/x-www-form-urlencoded", accept: "application/json" };
  if (options.basicAuth) {
    const { clientId, clientSecret } = options.basicAuth;
    headers.authorization = `Basic ${Buffer.from(`${encodeURIComponent(clientId)}:${encodeURIComponent(clientSecret)}`).toString("base64")}`;
  }
  let res: Response;
  try {
    res = await (options.fetch ?? fetch)(endpoint, { method: "POST", headers, body: new URLSearchParams(form).toString(), signal: options.signal ?? null });
  } catch (error) {
    if (options.signal?.aborted) throw error;
    throw connectionErrorOf(error, endpoint);
  }
  const text = await res.text();
  let body: unknown;
  try {
    body = text ? JSON.parse(text) : undefined;
  } catch {
    body = undefined;
  }
  if (!res.ok) {
    const oauth = (body ?? {}) as { error?: unknown; error_description?: unknown };
    // OAuth errors (invalid_grant, invalid_client) mean the credentials no longer work.
    if (res.status === 400 || res.status === 401) {
      throw new PortaAuthenticationError({
        status: 401,
        code: typeof oauth.error === "string" ? oauth.error : "invalid_grant",
        message: typeof oauth.error_description === "string" ? oauth.error_description : "The token endpoint refused the credentials.",
        requestId: res.headers.get("x-request-id") ?? undefined,
      });
    }
    throw errorFromResponse(res.status, body, res.headers);
  }
  const token = body as Partial<TokenResponse> | undefined;
  if (!token || typeof token.access_token !== "string") {
    throw new PortaAuthenticationError({ status: 401, code: "invalid_token_response", message: "The token endpoint answered without an access token." });
  }
  return token as TokenResponse;
}
