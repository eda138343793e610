import { createHash } from "node:crypto";
import { requireAdmin } from "../admin/http/require-admin";
import type { Collaborators, ContextSource } from "../context";
import { authorizationUrl, exchangeCode, revokeToken, verifyIdToken, type ConsoleAddress } from "./oidc-client";
import {
  clearSignInCookie,
  createSession,
  newSecret,
  readCookie,
  savePendingSignIn,
  sessionCookie,
  SIGN_IN_COOKIE,
  signInCookie,
  takePendingSignIn,
} from "./session";

/** Only console paths may be returned to after sign-in (no open redirect). */
export function safeReturnTo(value: string | null | undefined): string {
  return value && /^\/console(\/[^\\]*)?$/.test(value) && !value.startsWith("//") ? value : "/console";
}

/** Starts a sign-in: state, nonce and the PKCE verifier stay on the server; the state also goes into a short cookie. */
export async function startSignIn(services: ConsoleAddress & Pick<Collaborators, "store">, returnTo: string, language: string) {
  const state = newSecret();
  const nonce = newSecret();
  const verifier = newSecret();
  const challenge = createHash("sha256").update(verifier).digest("base64url");
  await savePendingSignIn(services, state, { verifier, nonce, returnTo: safeReturnTo(returnTo) });
  return { location: authorizationUrl(services, { state, nonce, challenge, language }), cookie: signInCookie(services, state) };
}

export type CallbackResult =
  | { ok: true; location: string; cookies: string[] }
  | { ok: false; reason: "refused" | "failed"; cookies: string[] };

/**
 * The OIDC callback: the state must match this browser's cookie and a pending sign-in; the code
 * is exchanged with the PKCE verifier; the ID token's nonce is checked; and the access token must
 * pass the Admin API's own authentication (a service-admin of the super-admin organization).
 */
export async function completeSignIn(services: ContextSource, request: Request): Promise<CallbackResult> {
  const url = new URL(request.url);
  const cookies = [clearSignInCookie(services)];
  const state = url.searchParams.get("state");
  const code = url.searchParams.get("code");
  if (!state || state !== readCookie(request, SIGN_IN_COOKIE)) return { ok: false, reason: "failed", cookies };
  const pending = await takePendingSignIn(services, state);
  if (!pending) return { ok: false, reason: "failed", cookies };
  if (!code) {
    // The person was refused at the login page (access_denied) or cancelled.
    return { ok: false, reason: url.searchParams.get("error") === "access_denied" ? "refused" : "failed", cookies };
  }
  let tokens;
  try {
    tokens = await exchangeCode(services, code, pending.verifier);
    if (!tokens.idToken) throw new Error("no ID token");
    await verifyIdToken(services, tokens.idToken, pending.nonce);
  } catch (error) {
    services.logger.warn({ err: error }, "console sign-in failed");
    return { ok: false, reason: "failed", cookies };
  }
  try {
    const admin = await requireAdmin(services, new Request(url, { headers: { authorization: `Bearer ${tokens.accessToken}` } }));
    const id = await createSession(services, { userId: admin.id, email: admin.email }, tokens);
    return { ok: true, location: pending.returnTo, cookies: [...cookies, sessionCookie(services, id)] };
  } catch {
    // Signed in, but not a service-admin: the tokens are of no use to anyone.
    if (tokens.refreshToken) await revokeToken(services, tokens.refreshToken, "refresh_token");
    await revokeToken(services, tokens.accessToken, "access_token");
    return { ok: false, reason: "refused", cookies };
  }
}
