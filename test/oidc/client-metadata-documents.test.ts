import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync } from "node:fs";
import { createServer, type Server } from "node:https";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import * as oidc from "openid-client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { csrfOf, TestBrowser } from "../support/browser";
import { createUser, giveRoleWithPermissions } from "../support/factories";
import { adminApi, obtainAdminTokens } from "../support/admin-api";
import { followAuthorization, pkcePair, verifyWithJwks } from "../support/oidc";
import { startTestPorta, type TestPorta } from "../support/porta";
import { mainOf } from "../login/helpers";

/**
 * Client ID metadata documents end to end: an organization that accepts them lets a client whose
 * client_id is the https URL of its document sign a person in through the real pages (the
 * consent page naming the domain the document came from) and redeem the code as a public client
 * with PKCE; discovery says so. An organization that does not accept them, a host outside its
 * domains, or a document naming another client_id leaves the client unknown; nothing is fetched
 * where the policy says no.
 *
 * The documents are served over TLS by a local server whose self-signed certificate this test
 * process trusts (as a closed network's CA would be); Porta runs with private networks allowed.
 */
let porta: TestPorta;
let docs: Server;
let docsBase: string;
const served = new Map<string, unknown>();
const hits = new Map<string, number>();
const REDIRECT = "http://127.0.0.1:33418/callback";
const PASSWORD = "a long test password 1";
/** Where Node's own fetch finds its dispatcher (its bundled undici). */
const DISPATCHER = Symbol.for("undici.globalDispatcher.1");
let previousDispatcher: unknown;

beforeAll(async () => {
  const dir = mkdtempSync(path.join(tmpdir(), "porta-cimd-"));
  execFileSync("openssl", ["req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-days", "1", "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1",
    "-keyout", path.join(dir, "key.pem"), "-out", path.join(dir, "cert.pem")], { stdio: "ignore" });
  const cert = readFileSync(path.join(dir, "cert.pem"));
  docs = createServer({ key: readFileSync(path.join(dir, "key.pem")), cert }, (req, res) => {
    hits.set(req.url!, (hits.get(req.url!) ?? 0) + 1);
    const body = served.get(req.url!);
    if (body === undefined) res.writeHead(404).end();
    else res.writeHead(200, { "content-type": "application/json", "cache-control": "max-age=600" }).end(JSON.stringify(body));
  });
  await new Promise<void>((resolve) => docs.listen(0, "127.0.0.1", resolve));
  docsBase = `https://127.0.0.1:${(docs.address() as AddressInfo).port}`;
  // This process trusts the documents' certificate, as a machine trusts its network's CA.
  await fetch("data:,"); // makes Node create its global dispatcher
  const globals = globalThis as unknown as Record<symbol, { constructor: new (options: unknown) => unknown }>;
  previousDispatcher = globals[DISPATCHER];
  const Agent = globals[DISPATCHER]!.constructor;
  globals[DISPATCHER] = new Agent({ connect: { ca: cert } }) as { constructor: new (options: unknown) => unknown };
  porta = await startTestPorta({ env: { OUTBOUND_ALLOW_PRIVATE_NETWORKS: "true" } });
});
afterAll(async () => {
  await porta?.stop();
  if (previousDispatcher) (globalThis as Record<symbol, unknown>)[DISPATCHER] = previousDispatcher;
  await new Promise<void>((resolve) => docs?.close(() => resolve()));
});

const unique = () => Math.random().toString(16).slice(2, 10);

async function organizationWith(policy: { enabled: boolean; allowedDomains?: string[] }) {
  const prisma = porta.services.db.prisma;
  const slug = `cimd-${unique()}`;
  const org = await prisma.organization.create({
    data: { slug, name: `Organization ${slug}`, defaultLoginMethods: ["password"], registrationPolicy: { clientIdMetadataDocuments: { enabled: policy.enabled, allowedDomains: policy.allowedDomains ?? [] } } },
  });
  const user = await createUser(prisma, org.id, { email: `person-${unique()}@example.com`, password: PASSWORD });
  return { org, user, issuer: `${porta.baseUrl}/${slug}` };
}

function publish(name: string, document: (url: string) => unknown = (url) => ({ client_id: url, client_name: "Inspector Agent", redirect_uris: [REDIRECT], grant_types: ["authorization_code", "refresh_token"] })) {
  const pathname = `/agents/${name}-${unique()}.json`;
  const url = `${docsBase}${pathname}`;
  served.set(pathname, document(url));
  return { url, pathname };
}

async function authorizationUrl(issuer: string, clientId: string) {
  const config = await oidc.discovery(new URL(issuer), clientId, { token_endpoint_auth_method: "none" }, oidc.None(), { execute: [oidc.allowInsecureRequests] });
  const { verifier, challenge } = await pkcePair();
  const url = oidc.buildAuthorizationUrl(config, { redirect_uri: REDIRECT, scope: "openid offline_access", code_challenge: challenge, code_challenge_method: "S256", prompt: "consent" });
  return { config, verifier, url };
}

describe("client ID metadata documents", () => {
  it("a client known only by its document's URL signs a person in through the real pages; consent names the domain", async () => {
    const { org, user, issuer } = await organizationWith({ enabled: true });
    const discovery = (await (await fetch(`${issuer}/.well-known/openid-configuration`)).json()) as Record<string, unknown>;
    expect(discovery.client_id_metadata_document_supported).toBe(true);
    const { url: clientId, pathname } = publish("inspector");
    const { config, verifier, url } = await authorizationUrl(issuer, clientId);

    const browser = new TestBrowser();
    const start = await browser.get(url.href);
    expect(start.status, await start.clone().text()).toBe(303);
    const interactionUrl = new URL(start.headers.get("location")!, url).href;
    const login = await browser.get(interactionUrl);
    expect(login.status).toBe(200);
    const posted = await browser.post(interactionUrl, { csrf: csrfOf(await login.text()), email: user.email, password: PASSWORD });
    const consent = await browser.follow(posted, interactionUrl);
    expect(consent.res.status).toBe(200);
    const html = await consent.res.text();
    const text = mainOf(html).replace(/<[^>]+>/g, " ").replace(/\s+/g, " ");
    expect(text).toContain("Inspector Agent wants to access your account");
    expect(text).toContain("Inspector Agent describes itself at 127.0.0.1. Allow only if you trust 127.0.0.1.");
    const allowed = await browser.post(`${consent.url}/consent`, { csrf: csrfOf(html), decision: "allow" });
    const back = await browser.follow(allowed, consent.url, (next) => next.startsWith(REDIRECT));
    expect(back.url, `${allowed.status} ${back.res.status}`).toMatch(/^http:\/\/127\.0\.0\.1:33418\/callback\?/);
    const tokens = await oidc.authorizationCodeGrant(config, new URL(back.url), { pkceCodeVerifier: verifier });
    expect(tokens.claims()).toMatchObject({ sub: user.id, aud: clientId, iss: `${porta.baseUrl}/${org.slug}` });
    expect(tokens.refresh_token).toBeTruthy();
    // The document was fetched once, whatever number of lookups the sign-in made.
    expect(hits.get(pathname)).toBe(1);
  });

  it("gets a token for an API resource open to clients that describe themselves, with the person's consent", async () => {
    const { org, user, issuer } = await organizationWith({ enabled: true });
    const admin = adminApi(porta, (await obtainAdminTokens(porta)).accessToken);
    const MCP = "https://mcp.example.com/mcp";
    const created = await admin.post(`/organizations/${org.id}/api-resources`, { identifier: MCP, name: "MCP server", scopes: ["tools:call"], openToDynamicClients: true, consentRequired: true });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    // A person's token carries only the scopes their roles grant (decision 077).
    await giveRoleWithPermissions(porta.services.db.prisma, org.id, user.id, "mcp-user", ["tools:call"]);
    const { url: clientId } = publish("mcp-agent");
    const config = await oidc.discovery(new URL(issuer), clientId, { token_endpoint_auth_method: "none" }, oidc.None(), { execute: [oidc.allowInsecureRequests] });
    const { verifier, challenge } = await pkcePair();
    const url = oidc.buildAuthorizationUrl(config, { redirect_uri: REDIRECT, scope: "openid tools:call", resource: MCP, code_challenge: challenge, code_challenge_method: "S256" });
    const prompts: string[] = [];
    const callback = await followAuthorization(porta, org, url, { accountId: user.id, prompts });
    expect(prompts).toEqual(["login", "consent"]);
    expect(callback.searchParams.get("error")).toBeNull();
    const tokens = await oidc.authorizationCodeGrant(config, callback, { pkceCodeVerifier: verifier }, { resource: MCP });
    const { payload } = await verifyWithJwks(porta, org, tokens.access_token, { audience: MCP });
    expect(payload).toMatchObject({ aud: MCP, client_id: clientId, sub: user.id, scope: "tools:call" });
  });

  it("leaves the client unknown where the policy is off, the host is not allowed, or the document names another client, fetching nothing where the policy says no", async () => {
    const off = await organizationWith({ enabled: false });
    const offDocument = publish("off");
    const refusedByPolicy = await fetch((await authorizationUrl(off.issuer, offDocument.url)).url, { redirect: "manual" });
    expect(refusedByPolicy.status).toBe(400);
    expect(await refusedByPolicy.text()).toContain("invalid_client");
    expect(hits.get(offDocument.pathname)).toBeUndefined();

    const elsewhere = await organizationWith({ enabled: true, allowedDomains: ["agents.example.com"] });
    const elsewhereDocument = publish("elsewhere");
    const refusedHost = await fetch((await authorizationUrl(elsewhere.issuer, elsewhereDocument.url)).url, { redirect: "manual" });
    expect(refusedHost.status).toBe(400);
    expect(hits.get(elsewhereDocument.pathname)).toBeUndefined();

    const open = await organizationWith({ enabled: true });
    const impostor = publish("impostor", () => ({ client_id: `${docsBase}/agents/someone-else.json`, client_name: "Impostor", redirect_uris: [REDIRECT] }));
    const refusedDocument = await fetch((await authorizationUrl(open.issuer, impostor.url)).url, { redirect: "manual" });
    expect(refusedDocument.status).toBe(400);
    expect(await refusedDocument.text()).toContain("invalid_client");
    const discovery = (await (await fetch(`${off.issuer}/.well-known/openid-configuration`)).json()) as Record<string, unknown>;
    expect(discovery.client_id_metadata_document_supported).toBeUndefined();
  });
});
