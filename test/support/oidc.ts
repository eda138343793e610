import { createRemoteJWKSet, jwtVerify, type JWTPayload, type JWTVerifyResult } from "jose";
import * as oidc from "openid-client";
import { recordConsent, recordLogin } from "~/.server/oidc/provider/interaction-results";
import { createClient, createOrganization, createUser, type ClientInput } from "./factories";
import type { TestPorta } from "./porta";

/**
 * Protocol test helpers: a cookie jar for fetch with `redirect: "manual"`, an authorization
 * request driver that finishes login and consent in-process through the provider's own
 * interaction API (as the login pages will), and openid-client configurations per client.
 */

export interface OrgRef {
  id: string;
  slug: string;
}

export interface ClientRef {
  id: string;
}

export const issuerOf = (porta: TestPorta, org: Pick<OrgRef, "slug">) => `${porta.baseUrl}/${org.slug}`;

// ---------------------------------------------------------------------------------------------
// Cookies

interface StoredCookie {
  name: string;
  value: string;
  path: string;
  expires?: number;
}

/** Enough of RFC 6265 for one host: paths, Max-Age/Expires and deletion. Domains are ignored. */
export class CookieJar {
  readonly #cookies = new Map<string, StoredCookie>();

  store(requestUrl: URL, response: Response): void {
    for (const line of response.headers.getSetCookie()) {
      const [pair, ...attributes] = line.split(";");
      const eq = pair!.indexOf("=");
      if (eq < 1) continue;
      const cookie: StoredCookie = { name: pair!.slice(0, eq).trim(), value: pair!.slice(eq + 1).trim(), path: defaultPath(requestUrl) };
      for (const attribute of attributes) {
        const [rawKey, ...rest] = attribute.split("=");
        const key = rawKey!.trim().toLowerCase();
        const value = rest.join("=").trim();
        if (key === "path" && value.startsWith("/")) cookie.path = value;
        if (key === "max-age") cookie.expires = Date.now() + Number(value) * 1000;
        if (key === "expires" && cookie.expires === undefined) cookie.expires = Date.parse(value);
      }
      const id = `${cookie.path}\t${cookie.name}`;
      if (cookie.expires !== undefined && cookie.expires <= Date.now()) this.#cookies.delete(id);
      else this.#cookies.set(id, cookie);
    }
  }

  header(url: URL): string | undefined {
    const now = Date.now();
    const matching = [...this.#cookies.values()]
      .filter((c) => (c.expires === undefined || c.expires > now) && pathMatches(url.pathname, c.path))
      .sort((a, b) => b.path.length - a.path.length);
    return matching.length ? matching.map((c) => `${c.name}=${c.value}`).join("; ") : undefined;
  }

  names(): string[] {
    return [...this.#cookies.values()].map((c) => c.name);
  }

  /** fetch with this jar, never following redirects. */
  async fetch(input: string | URL, init: RequestInit = {}): Promise<Response> {
    const url = new URL(input);
    const headers = new Headers(init.headers);
    const cookie = this.header(url);
    if (cookie) headers.set("cookie", cookie);
    const response = await fetch(url, { ...init, headers, redirect: "manual" });
    this.store(url, response);
    return response;
  }
}

function defaultPath(url: URL): string {
  const path = url.pathname;
  if (!path.startsWith("/") || path.lastIndexOf("/") === 0) return "/";
  return path.slice(0, path.lastIndexOf("/"));
}

function pathMatches(requestPath: string, cookiePath: string): boolean {
  if (requestPath === cookiePath) return true;
  if (!requestPath.startsWith(cookiePath)) return false;
  return cookiePath.endsWith("/") || requestPath[cookiePath.length] === "/";
}

// ---------------------------------------------------------------------------------------------
// Authorization requests

export interface AuthorizeOptions {
  /** The user who signs in when the provider asks for a login. */
  accountId: string;
  /** Shares cookies (the session) across requests; a fresh jar by default. */
  jar?: CookieJar;
  amr?: string[];
  /** Gets the name of each prompt the provider asked for, in order. */
  prompts?: string[];
}

/** An authorization request URL at /{slug}/auth/authorize (response_type=code unless given). */
export function authorizationUrl(porta: TestPorta, org: Pick<OrgRef, "slug">, client: ClientRef, params: Record<string, string>): URL {
  const url = new URL(`${issuerOf(porta, org)}/auth/authorize`);
  url.searchParams.set("client_id", client.id);
  url.searchParams.set("response_type", "code");
  for (const [key, value] of Object.entries(params)) url.searchParams.set(key, value);
  return url;
}

/** Thrown when the provider answers an authorization request with a page instead of a redirect. */
export class AuthorizationPageError extends Error {
  constructor(
    readonly status: number,
    readonly body: string,
  ) {
    super(`authorization request answered ${status} instead of redirecting: ${body.replace(/<style>.*<\/style>/s, "").slice(0, 3000)}`);
  }
}

const INTERACTION_PATH = /^\/interaction\/([^/?#]+)$/;

/**
 * Follows an authorization request (any URL, e.g. one openid-client built, PAR included),
 * finishing each login and consent prompt in-process, and returns the URL the provider sends
 * the browser to at the end: the client's redirect URI with a code, or with an error.
 */
export async function followAuthorization(porta: TestPorta, org: Pick<OrgRef, "slug">, start: URL, options: AuthorizeOptions): Promise<URL> {
  const jar = options.jar ?? new CookieJar();
  const tenant = await porta.services.oidc.get(org.slug);
  if (!tenant) throw new Error(`organization ${org.slug} has no provider`);
  let url = start;
  // A flow that reached its first interaction elsewhere (the device flow's confirmation) starts there.
  let pending: URL | undefined = start.origin === new URL(porta.baseUrl).origin && INTERACTION_PATH.test(start.pathname) ? start : undefined;
  for (let hop = 0; hop < 12; hop++) {
    let next: URL;
    if (pending) {
      next = pending;
      pending = undefined;
    } else {
      const response = await jar.fetch(url);
      const location = response.headers.get("location");
      if (response.status < 300 || response.status >= 400 || !location) {
        const errors = response.status >= 500 ? porta.logs.lines.filter((line) => Number(line.level) >= 50) : [];
        throw new AuthorizationPageError(response.status, `${await response.text()}\n${errors.map((line) => JSON.stringify(line)).join("\n")}`);
      }
      await response.body?.cancel();
      next = new URL(location, url);
    }
    const interaction = next.origin === new URL(porta.baseUrl).origin ? INTERACTION_PATH.exec(next.pathname) : null;
    if (!interaction) return next;
    const found = await tenant.provider.Interaction.find(decodeURIComponent(interaction[1]!));
    if (!found) throw new Error(`interaction ${interaction[1]} not found`);
    const prompt = found.prompt.name;
    options.prompts?.push(prompt);
    if (prompt === "login") {
      url = new URL(await recordLogin(found, { accountId: options.accountId, amr: options.amr ?? ["pwd"] }));
    } else if (prompt === "consent") {
      url = new URL(await recordConsent(tenant.provider, found));
    } else {
      throw new Error(`unexpected prompt ${prompt}`);
    }
  }
  throw new Error("too many redirects during the authorization request");
}

/** Sends an authorization request for `client`, signs `accountId` in, consents, returns the callback URL. */
export function authorize(
  porta: TestPorta,
  org: Pick<OrgRef, "slug">,
  client: ClientRef,
  params: Record<string, string>,
  options: AuthorizeOptions,
): Promise<URL> {
  return followAuthorization(porta, org, authorizationUrl(porta, org, client, params), options);
}

export async function pkcePair(): Promise<{ verifier: string; challenge: string }> {
  const verifier = oidc.randomPKCECodeVerifier();
  return { verifier, challenge: await oidc.calculatePKCECodeChallenge(verifier) };
}

// ---------------------------------------------------------------------------------------------
// openid-client

export interface ConfigurationOptions {
  /** Client secret of a confidential client; none means a public client (auth method none). */
  secret?: string;
  /** client_secret_post instead of client_secret_basic. */
  post?: boolean;
  /** Overrides of the discovered server metadata (e.g. another token endpoint). */
  server?: Partial<oidc.ServerMetadata>;
}

/** An openid-client Configuration for `client` at `org`, from the organization's discovery document. */
export async function clientConfiguration(
  porta: TestPorta,
  org: Pick<OrgRef, "slug">,
  client: ClientRef,
  options: ConfigurationOptions = {},
): Promise<oidc.Configuration> {
  const auth = options.secret === undefined ? oidc.None() : options.post ? oidc.ClientSecretPost(options.secret) : oidc.ClientSecretBasic(options.secret);
  const discovered = await oidc.discovery(new URL(issuerOf(porta, org)), client.id, undefined, auth, { execute: [oidc.allowInsecureRequests] });
  if (!options.server) return discovered;
  const configuration = new oidc.Configuration({ ...discovered.serverMetadata(), ...options.server }, client.id, undefined, auth);
  oidc.allowInsecureRequests(configuration);
  return configuration;
}

// ---------------------------------------------------------------------------------------------
// Raw requests and tokens

export const basicAuth = (clientId: string, secret: string) =>
  `Basic ${Buffer.from(`${encodeURIComponent(clientId)}:${encodeURIComponent(secret)}`).toString("base64")}`;

export interface JsonResponse {
  status: number;
  headers: Headers;
  body: Record<string, unknown>;
}

/** A form POST (token, introspection, revocation endpoints) answered with JSON. */
export async function postForm(url: string, form: Record<string, string>, headers: Record<string, string> = {}): Promise<JsonResponse> {
  const response = await fetch(url, {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded", accept: "application/json", ...headers },
    body: new URLSearchParams(form),
    redirect: "manual",
  });
  const text = await response.text();
  return { status: response.status, headers: response.headers, body: text ? (JSON.parse(text) as Record<string, unknown>) : {} };
}

/** Verifies a JWT of the organization against its published JWKS (fetched afresh). */
export function verifyWithJwks(porta: TestPorta, org: Pick<OrgRef, "slug">, token: string, options: { audience?: string; typ?: string } = {}): Promise<JWTVerifyResult<JWTPayload>> {
  const jwks = createRemoteJWKSet(new URL(`${issuerOf(porta, org)}/.well-known/jwks`));
  return jwtVerify(token, jwks, { issuer: issuerOf(porta, org), algorithms: ["ES256"], ...options });
}

/** The `error` of an openid-client failure (ResponseBodyError, AuthorizationResponseError). */
export async function oidcError(promise: Promise<unknown>): Promise<{ error: string; status?: number; description?: string }> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof oidc.ResponseBodyError) return { error: error.error, status: error.status, description: error.error_description };
    if (error instanceof oidc.AuthorizationResponseError) return { error: error.error, description: error.error_description };
    if (error instanceof oidc.WWWAuthenticateChallengeError) {
      const challenge = error.cause[0];
      return { error: challenge?.parameters.error ?? "www_authenticate", status: error.status, description: challenge?.parameters.error_description };
    }
    throw error;
  }
  throw new Error("expected the request to fail");
}

export interface CodeFlowOptions extends AuthorizeOptions {
  scope: string;
  redirectUri: string;
  /** More authorization request parameters (prompt, nonce, ...). */
  params?: Record<string, string>;
  DPoP?: oidc.DPoPHandle;
}

/** The whole authorization code flow with PKCE S256 through openid-client. */
export async function codeFlow(porta: TestPorta, org: Pick<OrgRef, "slug">, config: oidc.Configuration, options: CodeFlowOptions) {
  const { verifier, challenge } = await pkcePair();
  const state = oidc.randomState();
  const url = oidc.buildAuthorizationUrl(config, {
    redirect_uri: options.redirectUri,
    scope: options.scope,
    code_challenge: challenge,
    code_challenge_method: "S256",
    state,
    ...options.params,
  });
  const callback = await followAuthorization(porta, org, url, options);
  const checks = { pkceCodeVerifier: verifier, expectedState: state, ...(options.params?.nonce ? { expectedNonce: options.params.nonce } : {}) };
  return oidc.authorizationCodeGrant(config, callback, checks, undefined, options.DPoP ? { DPoP: options.DPoP } : undefined);
}

/** What most protocol tests start from: an organization, a person, and a confidential client as its relying party sees it. */
export interface RelyingPartySetup {
  org: OrgRef;
  userId: string;
  clientId: string;
  config: oidc.Configuration;
}

export async function relyingPartySetup(porta: TestPorta, client: ClientInput = {}): Promise<RelyingPartySetup> {
  const prisma = porta.services.db.prisma;
  const org = await createOrganization(prisma);
  const userId = (await createUser(prisma, org.id)).id;
  const created = await createClient(prisma, org.id, { ...client, confidential: true });
  const config = await clientConfiguration(porta, org, created.client, { secret: created.secret!.value });
  return { org, userId, clientId: created.client.id, config };
}
