import { createHash } from "node:crypto";
import { redirect, type AppLoadContext } from "@remix-run/node";
import { createLocalJWKSet, jwtVerify } from "jose";
import type { OperationId, OperationOutput } from "../admin/http/operation-table";
import { authenticateOrganizationAdmin, requireOrganizationAdmin } from "../admin/http/require-organization-admin";
import type { ContextSource } from "../context";
import { getOrganizationBySlug } from "../directory/organizations";
import { cookieHeader, readCookie } from "../http/cookies";
import { readForm } from "../http/form";
import { organizationIssuer } from "../oidc/edge/endpoints";
import { ORGANIZATION_CONSOLE_CLIENT_ID, ORGANIZATION_CONSOLE_SCOPE, organizationConsoleCallback } from "../oidc/storage/organization-console-client";
import type { Language } from "~/i18n/config";
import { callAdmin, type AdminInput, type AdminResult } from "./gateway";
import { consoleLanguage, NO_STORE } from "./page";
import { createSession, csrfSubject, loadSession, newSecret, savePendingSignIn, takePendingSignIn, type ConsoleSession } from "./session";

/**
 * An organization's own console, `/{slug}/console` (decision 090): its administrators sign in
 * through the organization's issuer with its built-in console client (its login methods, 2FA
 * policy and connections apply), and every page runs the Admin API's operations in process
 * through the organization's door (`authenticateOrganizationAdmin`), so every target is held to
 * the organization. Sessions are the service console's (session.ts: tokens on the server,
 * encrypted), under cookies of the organization's path.
 */
const SESSION_COOKIE = "porta_org_console";
const SIGN_IN_COOKIE = "porta_org_console_signin";
const SESSION_TTL_SECONDS = 8 * 60 * 60;
const SIGN_IN_TTL_SECONDS = 10 * 60;
const FORM_MAX_BYTES = 64 * 1024;

const consolePath = (slug: string) => `/${slug}/console`;
const cookie = (services: ContextSource, slug: string, name: string, value: string, maxAge: number) => cookieHeader(services.config.baseUrl, name, value, { path: consolePath(slug), maxAge });

/** Only this organization's console paths may be returned to after sign-in (no open redirect). */
function safeReturnTo(slug: string, value: string | null | undefined): string {
  const base = consolePath(slug);
  return value && (value === base || value.startsWith(`${base}/`)) && !value.includes("\\") && !value.startsWith("//") ? value : base;
}

async function startSignIn(services: ContextSource, slug: string, returnTo: string, language: string) {
  const state = newSecret();
  const nonce = newSecret();
  const verifier = newSecret();
  await savePendingSignIn(services, state, { verifier, nonce, returnTo: safeReturnTo(slug, returnTo) });
  const issuer = organizationIssuer(services.config.baseUrl, slug);
  const url = new URL(`${issuer}/auth/authorize`);
  url.search = new URLSearchParams({
    client_id: ORGANIZATION_CONSOLE_CLIENT_ID,
    response_type: "code",
    redirect_uri: organizationConsoleCallback(issuer),
    scope: ORGANIZATION_CONSOLE_SCOPE,
    state,
    nonce,
    code_challenge: createHash("sha256").update(verifier).digest("base64url"),
    code_challenge_method: "S256",
    ui_locales: language,
    // An administration console asks for the sign-in every time, as the service console does.
    prompt: "login",
  }).toString();
  return { location: url.href, cookie: cookie(services, slug, SIGN_IN_COOKIE, state, SIGN_IN_TTL_SECONDS) };
}

interface TokenResponse {
  access_token?: unknown;
  id_token?: unknown;
  expires_in?: unknown;
}

export type OrganizationCallbackResult = { ok: true; location: string; cookies: string[] } | { ok: false; cookies: string[] };

/**
 * The callback: state bound to this browser and a pending sign-in, the code exchanged with the
 * PKCE verifier, the ID token's signature, issuer, audience and nonce checked, and the access
 * token admitted by the organization's door itself (an org-admin or org-auditor who signed in
 * with a second factor or a passkey). Anyone else is refused and the tokens revoked.
 */
export async function completeOrganizationSignIn(services: ContextSource, slug: string, request: Request): Promise<OrganizationCallbackResult> {
  const url = new URL(request.url);
  const cookies = [cookie(services, slug, SIGN_IN_COOKIE, "", 0)];
  const state = url.searchParams.get("state");
  const code = url.searchParams.get("code");
  if (!state || state !== readCookie(request, SIGN_IN_COOKIE)) return { ok: false, cookies };
  const pending = await takePendingSignIn(services, state);
  if (!pending || !code) return { ok: false, cookies };
  const organization = await getOrganizationBySlug(services.db.prisma, services.cache, slug.toLowerCase());
  if (!organization) return { ok: false, cookies };
  const issuer = organizationIssuer(services.config.baseUrl, organization.slug);
  let accessToken: string;
  let expiresAt: number;
  try {
    const res = await fetch(`${issuer}/auth/token`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded", accept: "application/json" },
      body: new URLSearchParams({ client_id: ORGANIZATION_CONSOLE_CLIENT_ID, grant_type: "authorization_code", code, redirect_uri: organizationConsoleCallback(issuer), code_verifier: pending.verifier }).toString(),
    });
    const body = (await res.json().catch(() => ({}))) as TokenResponse;
    if (!res.ok || typeof body.access_token !== "string" || typeof body.id_token !== "string") throw new Error(`token endpoint answered ${res.status}`);
    const jwks = createLocalJWKSet({ keys: await services.keys.publicJwks(organization.id) });
    const { payload } = await jwtVerify(body.id_token, jwks, { issuer, audience: ORGANIZATION_CONSOLE_CLIENT_ID, algorithms: ["ES256"] });
    if (payload.nonce !== pending.nonce) throw new Error("the ID token does not belong to this sign-in");
    accessToken = body.access_token;
    expiresAt = Date.now() + (typeof body.expires_in === "number" ? body.expires_in : 300) * 1000;
  } catch (error) {
    services.logger.warn({ err: error }, "organization console sign-in failed");
    return { ok: false, cookies };
  }
  try {
    const caller = await requireOrganizationAdmin(services, new Request(url, { headers: { authorization: `Bearer ${accessToken}` } }), organization.slug);
    const id = await createSession(services, { userId: caller.admin.id, email: caller.admin.email }, { accessToken, refreshToken: undefined, idToken: undefined, expiresAt });
    return { ok: true, location: pending.returnTo, cookies: [...cookies, cookie(services, slug, SESSION_COOKIE, id, SESSION_TTL_SECONDS)] };
  } catch {
    await fetch(`${issuer}/token/revocation`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ client_id: ORGANIZATION_CONSOLE_CLIENT_ID, token: accessToken, token_type_hint: "access_token" }).toString(),
    }).catch(() => undefined);
    return { ok: false, cookies };
  }
}

/** What every page of an organization's console works with. */
export interface OrganizationConsole {
  slug: string;
  organizationId: string;
  session: ConsoleSession;
  language: Language;
  csrf: string;
  /** Runs an operation through the organization's door, as this administrator. */
  admin<Id extends OperationId>(operationId: Id, input?: AdminInput<Id>): Promise<AdminResult<OperationOutput<Id>>>;
}

interface Args {
  request: Request;
  context: AppLoadContext;
  params: { slug?: string };
}

/**
 * The signed-in organization console of this request; without a session (or once the door
 * refuses its token: expired, role taken away) a page load starts the sign-in and comes back.
 */
export async function requireOrganizationConsole({ request, context, params }: Args): Promise<OrganizationConsole> {
  const { services } = context;
  const slug = (params.slug ?? "").toLowerCase();
  const organization = await getOrganizationBySlug(services.db.prisma, services.cache, slug);
  if (!organization || organization.status !== "active" || slug === services.config.superAdminSlug) throw new Response("Not found", { status: 404, headers: NO_STORE });
  const language = await consoleLanguage(request);
  const signInAgain = async () => {
    const url = new URL(request.url);
    const start = await startSignIn(services, slug, request.method === "GET" ? url.pathname + url.search : consolePath(slug), language);
    return redirect(start.location, { headers: { "Set-Cookie": start.cookie, ...NO_STORE } });
  };
  const id = readCookie(request, SESSION_COOKIE);
  const session = id && id.length <= 100 ? await loadSession(services, id) : null;
  if (!id || !session || session.expiresAt <= Date.now()) throw await signInAgain();
  const authenticate = authenticateOrganizationAdmin(slug);
  return {
    slug,
    organizationId: organization.id,
    session,
    language,
    csrf: services.csrf.tokenFor(csrfSubject(`${slug}:${id}`)),
    admin: async <Id extends OperationId>(operationId: Id, input?: AdminInput<Id>) => {
      const result = await callAdmin(context, session.accessToken, operationId, input, authenticate);
      if (!result.ok && result.status === 401) throw await signInAgain();
      return result;
    },
  };
}

/** For actions: the console plus the posted form, refused with 403 unless it carries the session's CSRF token. */
export async function requireOrganizationConsoleForm(args: Args): Promise<{ console: OrganizationConsole; form: FormData }> {
  const console = await requireOrganizationConsole(args);
  // A form is parsed whole in memory: refuse what is larger than these pages could have sent.
  const length = Number(args.request.headers.get("content-length"));
  if (!Number.isSafeInteger(length) || length > FORM_MAX_BYTES) throw new Response("Too large", { status: 413, headers: { ...NO_STORE, Connection: "close" } });
  const form = await readForm(args.request);
  const id = readCookie(args.request, SESSION_COOKIE) ?? "";
  if (!args.context.services.csrf.verify(csrfSubject(`${console.slug}:${id}`), form.get("csrf"))) throw new Response("Forbidden", { status: 403, headers: NO_STORE });
  return { console, form };
}
