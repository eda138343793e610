import { createHash, randomBytes } from "node:crypto";
import { cookieHeader, readCookie } from "../http/cookies";
import type { Config } from "../config/env";
import type { Collaborators } from "../context";
import { refreshTokens, revokeToken, type ConsoleAddress, type TokenSet } from "./oidc-client";

/**
 * Console sessions: the tokens stay on the server, in the store (encrypted, with a TTL); the
 * browser holds only a random session id in an httpOnly, SameSite=Lax cookie (Secure on https).
 */
export const SESSION_COOKIE = "porta_console";
export const SIGN_IN_COOKIE = "porta_console_signin";
/** The language a person chose in the console; without it, Accept-Language decides. */
export const LANGUAGE_COOKIE = "porta_console_lang";
const LANGUAGE_TTL_SECONDS = 365 * 24 * 60 * 60;
const SESSION_TTL_SECONDS = 8 * 60 * 60;
const SIGN_IN_TTL_SECONDS = 10 * 60;
/** Refresh this long before the access token expires, so that no request carries a dying token. */
const REFRESH_MARGIN_MS = 60_000;

export interface ConsoleSession {
  userId: string;
  email: string;
  accessToken: string;
  refreshToken: string | undefined;
  expiresAt: number;
}

export interface PendingSignIn {
  verifier: string;
  nonce: string;
  returnTo: string;
}

const sessionKey = (id: string) => `console:session:${createHash("sha256").update(id).digest("base64url")}`;
const signInKey = (state: string) => `console:signin:${createHash("sha256").update(state).digest("base64url")}`;
const SESSION_AAD = "console session";

/** The CSRF subject of a console session: the interaction pages' guard, keyed by the session. */
export const csrfSubject = (sessionId: string) => `console:${sessionId}`;

export const newSecret = () => randomBytes(32).toString("base64url");

/** What the cookies are made with: Porta's address (Secure on https). */
type CookieOrigin = { config: Pick<Config, "baseUrl"> };
/** Where sessions are kept: the store, encrypted. */
export type SessionStore = Pick<Collaborators, "store" | "encrypter">;
/** What reading the current session takes: the store, and the token endpoint for a refresh (logged when it fails). */
export type SessionDeps = SessionStore & ConsoleAddress & Pick<Collaborators, "logger">;

const cookie = (services: CookieOrigin, name: string, value: string, options: { path: string; maxAge: number }) => cookieHeader(services.config.baseUrl, name, value, options);

export { readCookie };

export const sessionCookie = (services: CookieOrigin, id: string) => cookie(services, SESSION_COOKIE, id, { path: "/", maxAge: SESSION_TTL_SECONDS });
export const clearSessionCookie = (services: CookieOrigin) => cookie(services, SESSION_COOKIE, "", { path: "/", maxAge: 0 });
export const signInCookie = (services: CookieOrigin, state: string) => cookie(services, SIGN_IN_COOKIE, state, { path: "/api/oidc", maxAge: SIGN_IN_TTL_SECONDS });
export const languageCookie = (services: CookieOrigin, language: string) => cookie(services, LANGUAGE_COOKIE, language, { path: "/", maxAge: LANGUAGE_TTL_SECONDS });
export const clearSignInCookie = (services: CookieOrigin) => cookie(services, SIGN_IN_COOKIE, "", { path: "/api/oidc", maxAge: 0 });

export async function savePendingSignIn(services: Pick<Collaborators, "store">, state: string, pending: PendingSignIn) {
  await services.store.set(signInKey(state), JSON.stringify(pending), SIGN_IN_TTL_SECONDS);
}

/** One use only: a replayed callback finds nothing. */
export async function takePendingSignIn(services: Pick<Collaborators, "store">, state: string): Promise<PendingSignIn | null> {
  const raw = await services.store.take(signInKey(state));
  return raw ? (JSON.parse(raw) as PendingSignIn) : null;
}

/** Reads and writes a stored session (the refresh logic and its tests). */
export async function saveSession(services: SessionStore, id: string, session: ConsoleSession) {
  await services.store.set(sessionKey(id), services.encrypter.encrypt(JSON.stringify(session), SESSION_AAD), SESSION_TTL_SECONDS);
}

export async function createSession(services: SessionStore, user: { userId: string; email: string }, tokens: TokenSet): Promise<string> {
  const id = newSecret();
  await saveSession(services, id, { ...user, accessToken: tokens.accessToken, refreshToken: tokens.refreshToken, expiresAt: tokens.expiresAt });
  return id;
}

export async function loadSession(services: SessionStore, id: string): Promise<ConsoleSession | null> {
  const stored = await services.store.get(sessionKey(id));
  if (!stored) return null;
  try {
    return JSON.parse(services.encrypter.decrypt(stored, SESSION_AAD)) as ConsoleSession;
  } catch {
    return null;
  }
}

/** Refreshes in flight per session: parallel loaders of one page share one refresh (the refresh token rotates). */
const refreshing = new Map<string, Promise<ConsoleSession | null>>();

async function refresh(services: SessionDeps, id: string, session: ConsoleSession): Promise<ConsoleSession | null> {
  if (!session.refreshToken) return null;
  try {
    const tokens = await refreshTokens(services, session.refreshToken);
    const next = { ...session, accessToken: tokens.accessToken, refreshToken: tokens.refreshToken ?? session.refreshToken, expiresAt: tokens.expiresAt };
    await saveSession(services, id, next);
    return next;
  } catch (error) {
    services.logger.info({ err: error }, "console session could not be refreshed; signing in again");
    await services.store.del(sessionKey(id));
    return null;
  }
}

/** The session named by the request's cookie, its tokens refreshed when they are about to expire. */
export async function currentSession(services: SessionDeps, request: Request): Promise<{ id: string; session: ConsoleSession } | null> {
  const id = readCookie(request, SESSION_COOKIE);
  if (!id || id.length > 100) return null;
  const session = await loadSession(services, id);
  if (!session) return null;
  if (session.expiresAt - REFRESH_MARGIN_MS > Date.now()) return { id, session };
  let pending = refreshing.get(id);
  if (!pending) {
    pending = refresh(services, id, session).finally(() => refreshing.delete(id));
    refreshing.set(id, pending);
  }
  const refreshed = await pending;
  return refreshed ? { id, session: refreshed } : null;
}

/** Signs out: the tokens are revoked at the provider, then the session is forgotten. */
export async function endSession(services: ConsoleAddress & Pick<Collaborators, "store" | "logger">, id: string, session: ConsoleSession) {
  if (session.refreshToken) await revokeToken(services, session.refreshToken, "refresh_token");
  await revokeToken(services, session.accessToken, "access_token");
  await services.store.del(sessionKey(id));
}
