import { createLocalJWKSet, jwtVerify } from "jose";
import { ADMIN_CLIENT_ID, ADMIN_CLIENT_SCOPE } from "../admin/permissions";
import { systemActor } from "../auth/actors";
import type { Config } from "../config/env";
import { readContext, type Collaborators, type ContextSource } from "../context";
import { superAdminPublicJwks } from "../oidc/provider/super-admin-keys";
import { AppError } from "../errors";

/**
 * The console as a relying party of the super-admin organization: the shared admin client
 * `porta-admin` (public, Authorization Code + PKCE S256), talking to Porta's own endpoints.
 */
export const CALLBACK_PATH = "/api/oidc/callback";

/** Where the console finds its issuer and its callback: Porta's own address and the super-admin organization. */
export interface ConsoleAddress {
  config: Pick<Config, "baseUrl" | "superAdminSlug">;
}

export function consoleIssuer(services: ConsoleAddress) {
  return `${services.config.baseUrl}/${services.config.superAdminSlug}`;
}

export function callbackUrl(services: ConsoleAddress) {
  return `${services.config.baseUrl}${CALLBACK_PATH}`;
}

export function authorizationUrl(services: ConsoleAddress, input: { state: string; nonce: string; challenge: string; language: string }) {
  const url = new URL(`${consoleIssuer(services)}/auth/authorize`);
  url.search = new URLSearchParams({
    client_id: ADMIN_CLIENT_ID,
    response_type: "code",
    redirect_uri: callbackUrl(services),
    scope: ADMIN_CLIENT_SCOPE,
    state: input.state,
    nonce: input.nonce,
    code_challenge: input.challenge,
    code_challenge_method: "S256",
    ui_locales: input.language,
    // An admin console asks for the password at every sign-in, also after a sign-out while the
    // provider's own session lives on.
    prompt: "login",
  }).toString();
  return url.href;
}

export interface TokenSet {
  accessToken: string;
  refreshToken: string | undefined;
  idToken: string | undefined;
  /** Epoch milliseconds. */
  expiresAt: number;
}

/** Porta's own token endpoint refused the console (a spent refresh token, a bad code): the console signs in again. */
export class TokenEndpointError extends AppError {
  constructor(
    readonly upstreamStatus: number,
    readonly upstreamCode: string,
  ) {
    // No one is shown the message: the console logs it and signs in again.
    super(502, "token_endpoint_refused", `token endpoint answered ${upstreamStatus} ${upstreamCode}`);
    this.name = "TokenEndpointError";
  }
}

interface TokenResponse {
  access_token?: unknown;
  refresh_token?: unknown;
  id_token?: unknown;
  expires_in?: unknown;
  error?: unknown;
}

async function tokenRequest(services: ConsoleAddress, form: Record<string, string>): Promise<TokenSet> {
  const res = await fetch(`${consoleIssuer(services)}/auth/token`, {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded", accept: "application/json" },
    body: new URLSearchParams({ client_id: ADMIN_CLIENT_ID, ...form }).toString(),
  });
  const body = (await res.json().catch(() => ({}))) as TokenResponse;
  if (!res.ok || typeof body.access_token !== "string") {
    throw new TokenEndpointError(res.status, typeof body.error === "string" ? body.error : "invalid_response");
  }
  const expiresIn = typeof body.expires_in === "number" ? body.expires_in : 300;
  return {
    accessToken: body.access_token,
    refreshToken: typeof body.refresh_token === "string" ? body.refresh_token : undefined,
    idToken: typeof body.id_token === "string" ? body.id_token : undefined,
    expiresAt: Date.now() + expiresIn * 1000,
  };
}

export function exchangeCode(services: ConsoleAddress, code: string, verifier: string) {
  return tokenRequest(services, { grant_type: "authorization_code", code, redirect_uri: callbackUrl(services), code_verifier: verifier });
}

export function refreshTokens(services: ConsoleAddress, refreshToken: string) {
  return tokenRequest(services, { grant_type: "refresh_token", refresh_token: refreshToken });
}

/** Verifies the ID token of a sign-in (signature, issuer, audience, nonce) and returns its subject. */
export async function verifyIdToken(services: ContextSource, idToken: string, nonce: string): Promise<{ sub: string; email: string | undefined }> {
  const jwks = createLocalJWKSet({ keys: await superAdminPublicJwks(readContext(services, systemActor(null))) });
  const { payload } = await jwtVerify(idToken, jwks, { issuer: consoleIssuer(services), audience: ADMIN_CLIENT_ID, algorithms: ["ES256"] });
  if (payload.nonce !== nonce || typeof payload.sub !== "string") throw new Error("the ID token does not belong to this sign-in");
  return { sub: payload.sub, email: typeof payload.email === "string" ? payload.email : undefined };
}

/** Revokes a token at the revocation endpoint; a failure is logged, never thrown (sign-out still ends the session). */
export async function revokeToken(services: ConsoleAddress & Pick<Collaborators, "logger">, token: string, hint: "refresh_token" | "access_token") {
  try {
    const res = await fetch(`${consoleIssuer(services)}/token/revocation`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ client_id: ADMIN_CLIENT_ID, token, token_type_hint: hint }).toString(),
    });
    if (!res.ok) services.logger.warn({ status: res.status, hint }, "console sign-out: revocation refused");
  } catch (error) {
    services.logger.warn({ err: error, hint }, "console sign-out: revocation failed");
  }
}
