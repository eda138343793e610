import * as oidc from "openid-client";
import { csrfOf, startAuthorization } from "./browser";
import { TEST_ADMIN, type TestPorta } from "./porta";

/**
 * A real admin access token, obtained the way the CLI does: authorization code + PKCE with the
 * shared admin client through the real login pages, as the bootstrap admin. `request` changes
 * the authorization request (another scope, a resource), for tests of tokens the Admin API refuses.
 */
export async function obtainAdminTokens(
  porta: TestPorta,
  credentials: { email: string; password: string } = TEST_ADMIN,
  request: { scope?: string; extra?: Record<string, string> } = {},
): Promise<{ accessToken: string; refreshToken: string | undefined; idToken: string | undefined; config: oidc.Configuration }> {
  return signInAsAdmin(`${porta.baseUrl}/${porta.services.config.superAdminSlug}`, credentials, request);
}

/** The same sign-in against any running Porta, named by its super-admin issuer (spawned servers). */
export async function signInAsAdmin(
  issuer: string,
  credentials: { email: string; password: string },
  request: { scope?: string; extra?: Record<string, string> } = {},
): Promise<{ accessToken: string; refreshToken: string | undefined; idToken: string | undefined; config: oidc.Configuration }> {
  const redirectUri = "http://127.0.0.1:53682/callback";
  const start = await startAuthorization({ issuer, clientId: "porta-admin", redirectUri, scope: request.scope ?? "openid profile email roles", ...(request.extra ? { extra: request.extra } : {}) });
  const page = await start.browser.get(start.interactionUrl);
  const html = await page.text();
  const posted = await start.browser.post(start.interactionUrl, { csrf: csrfOf(html), email: credentials.email, password: credentials.password });
  if (posted.status !== 302 && posted.status !== 303) throw new Error(`admin login failed with ${posted.status}`);
  const { url } = await start.browser.follow(posted, start.interactionUrl, (u) => u.startsWith(redirectUri));
  if (!url.startsWith(redirectUri)) throw new Error(`admin login did not reach the callback: ${url}`);
  const tokens = await oidc.authorizationCodeGrant(start.config, new URL(url), { pkceCodeVerifier: start.verifier });
  return { accessToken: tokens.access_token, refreshToken: tokens.refresh_token, idToken: tokens.id_token, config: start.config };
}

export interface ApiResponse<T = unknown> {
  status: number;
  headers: Headers;
  body: T;
}

/** Calls the Admin API with a bearer token; bodies are JSON both ways. */
export function adminApi(porta: TestPorta, token: string | undefined) {
  async function call<T = unknown>(method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<ApiResponse<T>> {
    const res = await fetch(`${porta.url}/api/admin${path}`, {
      method,
      headers: {
        ...(token ? { authorization: `Bearer ${token}` } : {}),
        ...(body !== undefined ? { "content-type": "application/json" } : {}),
        ...headers,
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    return { status: res.status, headers: res.headers, body: (text ? JSON.parse(text) : undefined) as T };
  }
  return {
    call,
    get: <T = unknown>(path: string, headers?: Record<string, string>) => call<T>("GET", path, undefined, headers),
    post: <T = unknown>(path: string, body?: unknown, headers?: Record<string, string>) => call<T>("POST", path, body, headers),
    put: <T = unknown>(path: string, body?: unknown, headers?: Record<string, string>) => call<T>("PUT", path, body, headers),
    delete: <T = unknown>(path: string, headers?: Record<string, string>) => call<T>("DELETE", path, undefined, headers),
  };
}
