import { spawn } from "node:child_process";
import { createHash, randomBytes } from "node:crypto";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { createInterface } from "node:readline";
import { PortaAuthenticationError, connectionErrorOf, requestToken, updateProfile, type StoredCredentials } from "@porta/admin-client";
import type { Output } from "./output";

/**
 * `porta login`: Authorization Code + PKCE (S256) against the super-admin organization with
 * the shared admin client. The browser variant listens on a free loopback port at /callback
 * (Porta matches loopback redirect URIs on any port, RFC 8252 §7.3); the headless variant
 * prints the URL and reads the callback URL the person pastes back.
 */
interface Metadata {
  issuer: string;
  orgSlug: string;
  clientId: string;
}

interface Discovery {
  authorization_endpoint: string;
  token_endpoint: string;
  revocation_endpoint?: string;
  device_authorization_endpoint?: string;
}

async function getJson<T>(url: string): Promise<T> {
  const res = await fetch(url, { headers: { accept: "application/json" } }).catch((error: unknown) => {
    throw connectionErrorOf(error, url);
  });
  if (!res.ok) throw new Error(`${url} answered ${res.status}`);
  return (await res.json()) as T;
}

export async function discover(server: string) {
  const metadata = await getJson<Metadata>(`${server}/api/admin/metadata`);
  const discovery = await getJson<Discovery>(`${metadata.issuer}/.well-known/openid-configuration`);
  return { metadata, discovery };
}

const base64url = (buf: Buffer) => buf.toString("base64url");

function claimsOf(jwt: string | undefined): Record<string, unknown> {
  const payload = jwt?.split(".")[1];
  if (!payload) return {};
  try {
    return JSON.parse(Buffer.from(payload, "base64url").toString("utf8")) as Record<string, unknown>;
  } catch {
    return {};
  }
}

function freeLoopbackServer(): Promise<{ server: Server; port: number }> {
  const server = createServer();
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => resolve({ server, port: (server.address() as AddressInfo).port }));
  });
}

/** Waits for the browser to come back to /callback; answers it with a short page. */
function awaitCallback(server: Server, port: number): Promise<URL> {
  return new Promise((resolve) => {
    server.on("request", (req, res) => {
      const url = new URL(req.url ?? "/", `http://127.0.0.1:${port}`);
      if (url.pathname !== "/callback") {
        res.writeHead(404).end();
        return;
      }
      const ok = url.searchParams.has("code");
      res.writeHead(ok ? 200 : 400, { "content-type": "text/html; charset=utf-8", "cache-control": "no-store" });
      res.end(
        `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Porta CLI</title></head><body><h1>${ok ? "You are signed in to the Porta CLI" : "Sign-in failed"}</h1><p>You can close this window and return to the terminal.</p></body></html>`,
      );
      resolve(url);
    });
  });
}

function readPastedUrl(output: Output): Promise<URL> {
  const rl = createInterface({ input: process.stdin });
  return new Promise((resolve, reject) => {
    output.info("Paste the URL your browser was sent to (it starts with the redirect URI above):");
    let answered = false;
    rl.on("line", (line) => {
      const text = line.trim();
      if (!text || answered) return;
      answered = true;
      if (!URL.canParse(text)) reject(new Error("That is not a URL."));
      else resolve(new URL(text));
      rl.close();
      // Nothing more is read; an open stdin pipe would keep the process alive.
      process.stdin.destroy();
    });
    rl.on("close", () => {
      if (!answered) reject(new Error("No callback URL was pasted."));
    });
  });
}

function openBrowser(url: string): void {
  const command = process.platform === "darwin" ? "open" : process.platform === "win32" ? "cmd" : "xdg-open";
  const args = process.platform === "win32" ? ["/c", "start", "", url] : [url];
  const child = spawn(command, args, { stdio: "ignore", detached: true });
  child.on("error", () => undefined);
  child.unref();
}

export async function login(options: { server: string; profile: string; file: string; headless: boolean; openBrowser: boolean; output: Output }): Promise<StoredCredentials> {
  const { metadata, discovery } = await discover(options.server);
  const verifier = base64url(randomBytes(32));
  const challenge = base64url(createHash("sha256").update(verifier).digest());
  const state = base64url(randomBytes(16));

  let listener: { server: Server; port: number } | undefined;
  let redirectUri: string;
  if (options.headless) {
    // Nothing listens: the browser shows a connection error, and its address bar holds the code.
    redirectUri = "http://127.0.0.1:8976/callback";
  } else {
    listener = await freeLoopbackServer();
    redirectUri = `http://127.0.0.1:${listener.port}/callback`;
  }
  const authorize = new URL(discovery.authorization_endpoint);
  authorize.search = new URLSearchParams({
    response_type: "code",
    client_id: metadata.clientId,
    redirect_uri: redirectUri,
    scope: "openid profile email roles offline_access",
    code_challenge: challenge,
    code_challenge_method: "S256",
    state,
  }).toString();

  let callback: URL;
  try {
    options.output.info(`Open this URL to sign in to ${metadata.issuer}:`);
    options.output.info(`LOGIN_URL ${authorize.href}`);
    if (listener) {
      const pending = awaitCallback(listener.server, listener.port);
      if (options.openBrowser) openBrowser(authorize.href);
      callback = await pending;
    } else {
      callback = await readPastedUrl(options.output);
    }
  } finally {
    listener?.server.closeAllConnections();
    listener?.server.close();
  }

  if (callback.searchParams.get("state") !== state) throw new PortaAuthenticationError({ status: 401, code: "state_mismatch", message: "The callback does not belong to this login (state mismatch)." });
  const error = callback.searchParams.get("error");
  if (error) throw new PortaAuthenticationError({ status: 401, code: error, message: callback.searchParams.get("error_description") ?? "The sign-in was refused." });
  const code = callback.searchParams.get("code");
  if (!code) throw new PortaAuthenticationError({ status: 401, code: "no_code", message: "The callback URL carries no authorization code." });

  const token = await requestToken(discovery.token_endpoint, {
    grant_type: "authorization_code",
    code,
    redirect_uri: redirectUri,
    client_id: metadata.clientId,
    code_verifier: verifier,
  });
  return storeCredentials(options, metadata, discovery, token);
}

type TokenAnswer = Awaited<ReturnType<typeof requestToken>>;

/** The profile a sign-in stores, whichever way it was made. */
async function storeCredentials(options: { server: string; profile: string; file: string }, metadata: Metadata, discovery: Discovery, token: TokenAnswer): Promise<StoredCredentials> {
  const idClaims = claimsOf(token.id_token);
  const credentials: StoredCredentials = {
    server: options.server,
    issuer: metadata.issuer,
    clientId: metadata.clientId,
    tokenEndpoint: discovery.token_endpoint,
    accessToken: token.access_token,
    refreshToken: token.refresh_token,
    idToken: token.id_token,
    expiresAt: Date.now() + (token.expires_in ?? 300) * 1000,
    email: typeof idClaims.email === "string" ? idClaims.email : undefined,
  };
  await updateProfile(options.file, options.profile, credentials);
  return credentials;
}

const DEVICE_CODE_GRANT = "urn:ietf:params:oauth:grant-type:device_code";
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * `porta login --device` (RFC 8628, decision 049): for a machine without a browser. Porta gives a
 * code; the person opens the address on any device, enters it and signs in there, while the CLI
 * polls the token endpoint at the interval Porta named, 5 s slower after each `slow_down`.
 */
export async function loginWithDevice(options: { server: string; profile: string; file: string; output: Output }): Promise<StoredCredentials> {
  const { metadata, discovery } = await discover(options.server);
  if (!discovery.device_authorization_endpoint) throw new Error(`${metadata.issuer} does not offer sign-in with a device code.`);
  const started = await postForm(discovery.device_authorization_endpoint, { client_id: metadata.clientId, scope: "openid profile email roles offline_access" });
  if (started.status !== 200) throw new PortaAuthenticationError({ status: 401, code: String(started.body.error ?? "device_authorization_failed"), message: String(started.body.error_description ?? "Porta refused to start a device sign-in.") });
  const deviceCode = String(started.body.device_code);
  const userCode = String(started.body.user_code);
  const verificationUri = String(started.body.verification_uri);
  let interval = typeof started.body.interval === "number" && started.body.interval > 0 ? started.body.interval : 5;
  const expiresAt = Date.now() + (typeof started.body.expires_in === "number" ? started.body.expires_in : 600) * 1000;
  options.output.info(`To sign in to ${metadata.issuer}, open ${verificationUri} in a browser on any device and enter the code ${userCode}`);
  options.output.info(`DEVICE_URL ${verificationUri}`);
  options.output.info(`DEVICE_CODE ${userCode}`);
  options.output.info("Waiting for the sign-in…");
  while (Date.now() < expiresAt) {
    await sleep(interval * 1000);
    const answer = await postForm(discovery.token_endpoint, { grant_type: DEVICE_CODE_GRANT, device_code: deviceCode, client_id: metadata.clientId });
    if (answer.status === 200) return storeCredentials(options, metadata, discovery, answer.body as unknown as TokenAnswer);
    const error = String(answer.body.error ?? "");
    if (error === "authorization_pending") continue;
    if (error === "slow_down") {
      interval += 5;
      continue;
    }
    const message =
      error === "access_denied" ? "The sign-in was cancelled in the browser." : error === "expired_token" ? "The code expired before it was entered. Run `porta login --device` again." : String(answer.body.error_description ?? "The sign-in failed.");
    throw new PortaAuthenticationError({ status: 401, code: error || "device_login_failed", message });
  }
  throw new PortaAuthenticationError({ status: 401, code: "expired_token", message: "The code expired before it was entered. Run `porta login --device` again." });
}

async function postForm(url: string, form: Record<string, string>): Promise<{ status: number; body: Record<string, unknown> }> {
  const res = await fetch(url, { method: "POST", headers: { "content-type": "application/x-www-form-urlencoded", accept: "application/json" }, body: new URLSearchParams(form).toString() }).catch((error: unknown) => {
    throw connectionErrorOf(error, url);
  });
  const text = await res.text();
  let body: Record<string, unknown>;
  try {
    body = text ? (JSON.parse(text) as Record<string, unknown>) : {};
  } catch {
    // Not the protocol's JSON (a proxy's page): the status alone speaks.
    body = {};
  }
  return { status: res.status, body };
}

/** Revokes the refresh token at the server, then forgets the profile. */
export async function logout(stored: StoredCredentials, options: { profile: string; file: string }): Promise<{ revoked: boolean }> {
  let revoked = false;
  if (stored.refreshToken) {
    const { discovery } = await discover(stored.server);
    const endpoint = discovery.revocation_endpoint ?? `${stored.issuer}/token/revocation`;
    const res = await fetch(endpoint, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ token: stored.refreshToken, token_type_hint: "refresh_token", client_id: stored.clientId }).toString(),
    });
    await res.arrayBuffer();
    revoked = res.ok;
  }
  await updateProfile(options.file, options.profile, undefined);
  return { revoked };
}

export { claimsOf };
