import { createHash, randomBytes } from "node:crypto";
import type { Request as ExpressRequest, Response as ExpressResponse } from "express";
import type { Organization } from "~/generated/prisma/client";
import type { Context } from "../context";
import { getUserById, type CachedUser } from "../directory/users";
import { ACCOUNT_CLIENT_ID, accountCallbackUri } from "../oidc/storage/account-client";
import { ephemeralKey } from "../oidc/storage/adapter";
import { organizationIssuer, PROVIDER_ROUTES } from "../oidc/edge/endpoints";
import { browserSessionOf } from "../oidc/storage/sessions";
import type { TenantProvider } from "../oidc/provider/registry";

/**
 * Who is at `/{slug}/account`: the person of this browser's session at the organization's own
 * provider (the session the sign-in pages create), read with the provider's check of the signed
 * cookie. The account page signs in through the built-in client `porta-account`, so a person
 * signs in there exactly as at any application of the organization, 2FA policy included.
 */

/** A sensitive form (two-factor, a new password) opens while the sign-in is this fresh... */
export const STEP_UP_OPEN_SECONDS = 5 * 60;
/** ...and is accepted while it is this fresh, so that a form opened in time can be finished. */
export const STEP_UP_SUBMIT_SECONDS = 15 * 60;

export interface SignedIn {
  status: "signed_in";
  organization: Organization;
  tenant: TenantProvider;
  user: CachedUser;
  /** The store key of this browser's session: the sessions list marks it and never ends it by mistake. */
  sessionKey: string;
  /** auth_time of this browser's sign-in, in seconds. */
  authTime: number;
  amr: string[];
  csrf: string;
}

export type AccountAccess = { status: "unknown" } | { status: "signed_out"; organization: Organization } | SignedIn;

/** The CSRF subject of the account page: bound to the browser session, so a token works only in it. */
const csrfSubject = (sessionKey: string) => `account:${createHash("sha256").update(sessionKey).digest("base64url")}`;

export async function readAccountAccess(ctx: Context<"oidc" | "cache" | "csrf">, req: ExpressRequest, res: ExpressResponse, slug: string): Promise<AccountAccess> {
  const tenant = await ctx.oidc.get(slug);
  if (!tenant || tenant.organization.status !== "active") return { status: "unknown" };
  const { organization } = tenant;
  const session = await browserSessionOf(tenant.provider, req, res);
  if (!session.accountId || session.loginTs === undefined) return { status: "signed_out", organization };
  const user = await getUserById(ctx.db, ctx.cache, session.accountId);
  // A deactivated or deleted account, or another organization's: signed out here (the provider's login check agrees).
  if (!user || user.organizationId !== organization.id || user.status !== "active") return { status: "signed_out", organization };
  const sessionKey = ephemeralKey(organization.id, "Session", session.id);
  return {
    status: "signed_in",
    organization,
    tenant,
    user,
    sessionKey,
    authTime: session.loginTs,
    amr: session.amr ?? [],
    csrf: ctx.csrf.tokenFor(csrfSubject(sessionKey)),
  };
}

export function verifyAccountCsrf(csrf: Context<"csrf">["csrf"], access: SignedIn, token: unknown): boolean {
  return csrf.verify(csrfSubject(access.sessionKey), token);
}

export function signInAge(access: SignedIn, now = Date.now()): number {
  return Math.floor(now / 1000) - access.authTime;
}

export const mayOpenSensitive = (access: SignedIn, now = Date.now()) => signInAge(access, now) <= STEP_UP_OPEN_SECONDS;
export const maySubmitSensitive = (access: SignedIn, now = Date.now()) => signInAge(access, now) <= STEP_UP_SUBMIT_SECONDS;

/** Where the account page goes back to after a sign-in, as a closed set (never a URL from the request). */
export const ACCOUNT_RETURNS = ["overview", "two-factor"] as const;
export type AccountReturn = (typeof ACCOUNT_RETURNS)[number];

export function accountReturnPath(slug: string, to: string | null): string {
  return to === "two-factor" ? `/${slug}/account/two-factor` : `/${slug}/account`;
}

/**
 * The authorization request that signs in to the account page: the organization's own sign-in
 * pages, then its callback. `reauth` is the step-up: the person proves who they are again
 * (prompt=login, max_age=0), which renews auth_time and amr in the provider's session.
 */
export function accountSignInUrl(
  baseUrl: string,
  slug: string,
  options: { returnTo: AccountReturn; reauth?: boolean; loginHint?: string; uiLocales?: string },
): string {
  const issuer = organizationIssuer(baseUrl, slug);
  const params = new URLSearchParams({
    client_id: ACCOUNT_CLIENT_ID,
    response_type: "code",
    scope: "openid",
    redirect_uri: accountCallbackUri(baseUrl, slug),
    state: options.returnTo,
    // PKCE is required of public clients; the account page reads the session, never redeems the code.
    code_challenge: randomBytes(32).toString("base64url"),
    code_challenge_method: "S256",
  });
  if (options.reauth) {
    params.set("prompt", "login");
    params.set("max_age", "0");
  }
  if (options.loginHint) params.set("login_hint", options.loginHint);
  if (options.uiLocales) params.set("ui_locales", options.uiLocales);
  return `${issuer}${PROVIDER_ROUTES.authorization}?${params}`;
}

/** The step-up: the organization's sign-in again for this person (prompt=login), then back to `returnTo`. */
export function stepUpUrl(baseUrl: string, access: SignedIn, language: string, returnTo: AccountReturn): string {
  return accountSignInUrl(baseUrl, access.organization.slug, { returnTo, reauth: true, loginHint: access.user.email, uiLocales: language });
}

/**
 * The end of the account page's sign-in: the session cookie is set by then, and the account page
 * reads the session, never tokens, so the code is thrown away rather than left to expire.
 */
export async function discardAccountCode(tenant: TenantProvider, code: string | null): Promise<void> {
  if (!code || code.length > 200) return;
  const found = await tenant.provider.AuthorizationCode.find(code);
  if (found && found.clientId === ACCOUNT_CLIENT_ID) await found.destroy();
}

/** RP-initiated logout from the account page, back to its "signed out" page. */
export function accountSignOutUrl(baseUrl: string, slug: string): string {
  const issuer = organizationIssuer(baseUrl, slug);
  const params = new URLSearchParams({ client_id: ACCOUNT_CLIENT_ID, post_logout_redirect_uri: `${issuer}/account/signed-out` });
  return `${issuer}${PROVIDER_ROUTES.end_session}?${params}`;
}
