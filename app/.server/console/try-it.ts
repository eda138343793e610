import { createHash } from "node:crypto";
import { createRemoteJWKSet, jwtVerify, type JWTPayload } from "jose";
import type { Client } from "~/schemas/client";
import { organizationIssuer, PROVIDER_ROUTES } from "../oidc/edge/endpoints";
import type { Services } from "../services";
import type { Console } from "./page";
import { newSecret } from "./session";

/**
 * "Try it" on a client's page: Porta runs the authorization code flow for that client, with its
 * own test page as the redirect URI, and shows the ID token it got. The operator sees a working
 * sign-in (the organization's pages, login methods, consent) before writing any code.
 *
 * The flow is the client's real one. The test page must be one of the client's redirect URIs,
 * added only when the operator asks (and removable like any other). A confidential client's
 * secrets are stored hashed, so a trial makes a secret of its own, labelled and expiring in
 * minutes, and revokes it when the trial ends; both are in the client's audit history. The
 * trial's state, PKCE verifier and nonce stay on the server, bound to the console session.
 */
export const TRY_IT_PATH = "/console/try-it/callback";
const TTL_SECONDS = 15 * 60;
const SECRET_LABEL = "Try it (console)";

type Stores = Pick<Services, "store" | "config">;

export const tryItRedirectUri = (baseUrl: string) => `${baseUrl}${TRY_IT_PATH}`;

interface Trial {
  orgId: string;
  slug: string;
  clientId: string;
  verifier: string;
  nonce: string;
  secret: { id: string; value: string } | null;
}

const key = (sessionId: string, state: string) => `console:try-it:${createHash("sha256").update(`${sessionId}:${state}`).digest("base64url")}`;

export type TryItRefusal = "inactive" | "no_code_flow" | "signs_with_key" | "needs_redirect_uri";

/** Why this client cannot be tried as it is, or null when it can. */
export function tryItRefusal(client: Pick<Client, "status" | "grantTypes" | "tokenEndpointAuthMethod" | "redirectUris">, baseUrl: string): TryItRefusal | null {
  if (client.status !== "active") return "inactive";
  if (!client.grantTypes.includes("authorization_code")) return "no_code_flow";
  // Only the client holds its private key: Porta cannot authenticate as it.
  if (client.tokenEndpointAuthMethod === "private_key_jwt") return "signs_with_key";
  if (!client.redirectUris.includes(tryItRedirectUri(baseUrl))) return "needs_redirect_uri";
  return null;
}

/** Starts a trial: the URL the operator's browser goes to (the organization's authorization endpoint). */
export async function startTryIt(stores: Stores, console: Console, input: { orgId: string; slug: string; client: Client }): Promise<{ ok: true; location: string } | { ok: false; message: string }> {
  const { client } = input;
  let secret: Trial["secret"] = null;
  if (client.clientType === "confidential") {
    const expiresAt = new Date(Date.now() + TTL_SECONDS * 1000).toISOString();
    const made = await console.admin("clients.generateSecret", { params: { id: client.id }, body: { label: SECRET_LABEL, expiresAt } });
    if (!made.ok) return { ok: false, message: made.error.message };
    secret = { id: made.body.id, value: made.body.value };
  }
  const state = newSecret();
  const trial: Trial = { orgId: input.orgId, slug: input.slug, clientId: client.id, verifier: newSecret(), nonce: newSecret(), secret };
  await stores.store.set(key(console.sessionId, state), JSON.stringify(trial), TTL_SECONDS);
  const scopes = client.scope.split(" ");
  const url = new URL(organizationIssuer(stores.config.baseUrl, input.slug) + PROVIDER_ROUTES.authorization);
  url.search = new URLSearchParams({
    client_id: client.id,
    response_type: "code",
    redirect_uri: tryItRedirectUri(stores.config.baseUrl),
    scope: ["openid", ...["profile", "email"].filter((s) => scopes.includes(s))].join(" "),
    state,
    nonce: trial.nonce,
    code_challenge: createHash("sha256").update(trial.verifier).digest("base64url"),
    code_challenge_method: "S256",
    // The operator signs in as the person they test with, not as whoever the browser last was.
    prompt: "login",
    ui_locales: console.language,
  }).toString();
  return { ok: true, location: url.href };
}

export type TryItOutcome =
  | { ok: true; orgId: string; clientId: string; claims: JWTPayload; header: { alg: string; kid: string | undefined } }
  | { ok: false; reason: "unknown" | "refused" | "failed"; orgId: string | null; clientId: string | null; detail: string | null };

/** The test page: takes the trial of this state (once), exchanges the code, verifies the ID token and ends the trial's secret. */
export async function finishTryIt(stores: Stores & Pick<Services, "logger">, console: Console, url: URL): Promise<TryItOutcome> {
  const state = url.searchParams.get("state") ?? "";
  const stored = state ? await stores.store.take(key(console.sessionId, state)) : null;
  if (!stored) return { ok: false, reason: "unknown", orgId: null, clientId: null, detail: null };
  const trial = JSON.parse(stored) as Trial;
  const failed = (reason: "refused" | "failed", detail: string | null): TryItOutcome => ({ ok: false, reason, orgId: trial.orgId, clientId: trial.clientId, detail });
  try {
    const code = url.searchParams.get("code");
    if (!code) {
      const error = url.searchParams.get("error") ?? "no code";
      return failed(error === "access_denied" ? "refused" : "failed", [error, url.searchParams.get("error_description")].filter(Boolean).join(": "));
    }
    const issuer = organizationIssuer(stores.config.baseUrl, trial.slug);
    const form = new URLSearchParams({ grant_type: "authorization_code", code, redirect_uri: tryItRedirectUri(stores.config.baseUrl), code_verifier: trial.verifier });
    const headers: Record<string, string> = { "content-type": "application/x-www-form-urlencoded", accept: "application/json" };
    if (trial.secret) headers.authorization = `Basic ${Buffer.from(`${encodeURIComponent(trial.clientId)}:${encodeURIComponent(trial.secret.value)}`).toString("base64")}`;
    else form.set("client_id", trial.clientId);
    const res = await fetch(issuer + PROVIDER_ROUTES.token, { method: "POST", headers, body: form.toString() });
    const body = (await res.json().catch(() => ({}))) as { id_token?: unknown; error?: unknown; error_description?: unknown };
    if (!res.ok || typeof body.id_token !== "string") {
      return failed("failed", [body.error, body.error_description].filter((v) => typeof v === "string").join(": ") || `token endpoint answered ${res.status}`);
    }
    const verified = await jwtVerify(body.id_token, createRemoteJWKSet(new URL(issuer + PROVIDER_ROUTES.jwks)), { issuer, audience: trial.clientId });
    if (verified.payload.nonce !== trial.nonce) return failed("failed", "the ID token's nonce is not this trial's");
    return { ok: true, orgId: trial.orgId, clientId: trial.clientId, claims: verified.payload, header: { alg: verified.protectedHeader.alg, kid: verified.protectedHeader.kid } };
  } catch (error) {
    stores.logger.warn({ err: error }, "console try-it failed");
    return failed("failed", error instanceof Error ? error.message : null);
  } finally {
    if (trial.secret) await console.admin("clients.revokeSecret", { params: { id: trial.clientId, secretId: trial.secret.id } });
  }
}
