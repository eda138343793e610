import { readFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { UnauthorizedError, type OAuthClientProvider } from "@modelcontextprotocol/sdk/client/auth.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { OAuthClientInformationMixed, OAuthClientMetadata, OAuthTokens } from "@modelcontextprotocol/sdk/shared/auth.js";
import { expect, test, type Page } from "@playwright/test";
import type english from "../public/locales/en/login.json";
import { watchForPageErrors } from "./console-helpers";
import { startMcpServer, type RunningMcpServer } from "./mcp/server";
import { MCP_PORTS, MCP_RESOURCE, OTHER_RESOURCE } from "./mcp-seed";
import { readSeed, type Seed } from "./seed";

/**
 * The official MCP TypeScript SDK's client gets a token for an MCP server from Porta starting
 * from nothing but the server's URL (docs/mcp.md): the server's 401 names its RFC 9728 metadata,
 * which names the organization's issuer; the client reads Porta's RFC 8414 metadata, registers
 * itself (open dynamic registration), sends the person through Porta's real sign-in and consent
 * pages with PKCE and `resource`, and calls a tool with the token. A token Porta issued for
 * another API of the same organization does not open the server.
 */
const en = JSON.parse(readFileSync(new URL("../public/locales/en/login.json", import.meta.url), "utf8")) as typeof english;
const CALLBACK = `http://localhost:${MCP_PORTS.callback}/callback`;

let mcp: NonNullable<Seed["mcp"]>;
let server: RunningMcpServer;
let callbacks: Server;
let lastCallback: URL | undefined;

test.beforeAll(async () => {
  mcp = (await readSeed()).mcp!;
  server = await startMcpServer(mcp.issuer);
  // The MCP client's redirect URI: a loopback page, as a desktop MCP client has.
  callbacks = createServer((req, res) => {
    const url = new URL(req.url ?? "/", CALLBACK);
    // Chromium asks for /favicon.ico too.
    if (url.pathname !== "/callback") return void res.writeHead(404).end();
    lastCallback = url;
    res.writeHead(200, { "content-type": "text/html; charset=utf-8" }).end("<!doctype html><title>Signed in</title><main>You may close this window.</main>");
  });
  await new Promise<void>((resolve) => callbacks.listen(MCP_PORTS.callback, "127.0.0.1", resolve));
});
test.afterAll(async () => {
  await server?.close();
  await new Promise<void>((resolve) => (callbacks ? callbacks.close(() => resolve()) : resolve()));
});

/**
 * The SDK's OAuthClientProvider of an MCP client that keeps everything in memory and opens the
 * authorization URL in the Playwright page, where the person signs in and allows.
 */
class BrowserAuthProvider implements OAuthClientProvider {
  authorizationUrl: URL | undefined;
  registered: OAuthClientInformationMixed | undefined;
  private saved: OAuthTokens | undefined;
  private verifier = "";

  constructor(private readonly page: Page) {}

  get redirectUrl() {
    return CALLBACK;
  }
  get clientMetadata(): OAuthClientMetadata {
    return { client_name: "Werkstatt Agent", redirect_uris: [CALLBACK], grant_types: ["authorization_code", "refresh_token"], response_types: ["code"], token_endpoint_auth_method: "none" };
  }
  clientInformation() {
    return this.registered;
  }
  saveClientInformation(information: OAuthClientInformationMixed) {
    this.registered = information;
  }
  tokens() {
    return this.saved;
  }
  saveTokens(tokens: OAuthTokens) {
    this.saved = tokens;
  }
  saveCodeVerifier(verifier: string) {
    this.verifier = verifier;
  }
  codeVerifier() {
    return this.verifier;
  }
  async redirectToAuthorization(url: URL) {
    this.authorizationUrl = url;
    await this.page.goto(url.href);
    await expect(this.page.getByLabel(en.signIn.email, { exact: true })).toBeVisible();
    await this.page.getByLabel(en.signIn.email, { exact: true }).fill(mcp.user.email);
    await this.page.getByLabel(en.signIn.password, { exact: true }).fill(mcp.user.password);
    await this.page.getByRole("button", { name: en.signIn.submit }).click();
    // A client that registered itself is nobody's first party: the person is asked.
    await this.page.getByRole("button", { name: en.consent.allow }).click();
    await this.page.waitForURL((address) => address.href.startsWith(CALLBACK));
  }
}

test("an MCP client starts from the server URL alone: metadata, registration, sign-in with PKCE and resource, a tool call", async ({ browser }) => {
  const context = await browser.newContext();
  const page = await context.newPage();
  const problems = watchForPageErrors(page);
  const provider = new BrowserAuthProvider(page);

  const first = new StreamableHTTPClientTransport(new URL(server.url), { authProvider: provider });
  await expect(new Client({ name: "werkstatt-agent", version: "1.0.0" }).connect(first)).rejects.toBeInstanceOf(UnauthorizedError);

  // It registered itself at Porta and asked for this server as the resource, with PKCE.
  expect(provider.registered?.client_id).toBeTruthy();
  const asked = provider.authorizationUrl!;
  expect(asked.href.startsWith(`${mcp.issuer}/auth/authorize?`)).toBe(true);
  expect(asked.searchParams.get("resource")).toBe(MCP_RESOURCE);
  expect(asked.searchParams.get("code_challenge_method")).toBe("S256");
  expect(asked.searchParams.get("client_id")).toBe(provider.registered!.client_id);
  // The answer names Porta as its issuer (RFC 9207).
  expect(lastCallback?.searchParams.get("iss")).toBe(mcp.issuer);
  const code = lastCallback!.searchParams.get("code")!;
  await first.finishAuth(code);
  await first.close();

  const transport = new StreamableHTTPClientTransport(new URL(server.url), { authProvider: provider });
  const client = new Client({ name: "werkstatt-agent", version: "1.0.0" });
  await client.connect(transport);
  const result = await client.callTool({ name: "whoami", arguments: {} });
  const content = result.content as Array<{ type: string; text: string }>;
  expect(JSON.parse(content[0]!.text)).toEqual({
    sub: mcp.user.id,
    clientId: provider.registered!.client_id,
    scopes: ["tools:call"],
    resource: MCP_RESOURCE,
  });
  await client.close();
  expect(problems).toEqual([]);
  await context.close();
});

test("a Porta token for another API of the same organization is refused by the MCP server", async ({ request }) => {
  const { clientId, clientSecret } = mcp.otherResourceClient;
  const answer = await request.post(`${mcp.issuer}/auth/token`, {
    form: { grant_type: "client_credentials", resource: OTHER_RESOURCE, scope: "reports:read" },
    headers: { authorization: `Basic ${Buffer.from(`${encodeURIComponent(clientId)}:${encodeURIComponent(clientSecret)}`).toString("base64")}` },
  });
  expect(answer.status()).toBe(200);
  const { access_token: token } = (await answer.json()) as { access_token: string };

  const refused = await fetch(server.url, {
    method: "POST",
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json", accept: "application/json, text/event-stream" },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" }),
  });
  expect(refused.status).toBe(401);
  const challenge = refused.headers.get("www-authenticate") ?? "";
  expect(challenge).toContain('error="invalid_token"');
  expect(challenge).toContain(`resource_metadata="http://localhost:${MCP_PORTS.server}/.well-known/oauth-protected-resource/mcp"`);
});
