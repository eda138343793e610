import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createClient, createOrganization } from "../support/factories";
import { startTestPorta, type TestPorta } from "../support/porta";
import { consoleSignIn, type ConsoleVisit } from "./helpers";

/**
 * What an app developer copies from the console works: every address the organization page shows
 * is the one the organization's discovery document names, and a client page's quick start, run
 * as written (with the secret and PKCE values put in), reaches the login page or gets a token.
 */
let porta: TestPorta;
let admin: ConsoleVisit;
let org: Awaited<ReturnType<typeof createOrganization>>;

beforeAll(async () => {
  porta = await startTestPorta();
  admin = await consoleSignIn(porta);
  org = await createOrganization(porta.services.db.prisma);
});
afterAll(async () => {
  await porta?.stop();
});

const decode = (html: string) => html.replaceAll("&amp;", "&").replaceAll("&#x27;", "'").replaceAll("&quot;", '"').replaceAll("&lt;", "<").replaceAll("&gt;", ">");

/** The label → value pairs of a page's copyable values. */
function copyables(html: string): Map<string, string> {
  const found = new Map<string, string>();
  for (const match of html.matchAll(/<dt id="[^"]+">([^<]+)<\/dt><dd><code[^>]*>([^<]+)<\/code>/g)) found.set(decode(match[1]!), decode(match[2]!));
  return found;
}

const quickStartOf = (html: string) => decode(/<pre class="quick-start"><code>([\s\S]*?)<\/code><\/pre>/.exec(html)![1]!);

describe("the organization page's addresses", () => {
  it("shows the issuer, the discovery URL and every endpoint, each what the discovery document says", async () => {
    const html = await (await admin.browser.get(`${porta.baseUrl}/console/organizations/${org.id}`)).text();
    const shown = copyables(html);
    const discovery = (await (await fetch(shown.get("Discovery URL")!)).json()) as Record<string, string>;
    expect(shown.get("Issuer")).toBe(`${porta.baseUrl}/${org.slug}`);
    expect(discovery.issuer).toBe(shown.get("Issuer"));
    expect(shown.get("Authorization endpoint")).toBe(discovery.authorization_endpoint);
    expect(shown.get("Token endpoint")).toBe(discovery.token_endpoint);
    expect(shown.get("Userinfo endpoint")).toBe(discovery.userinfo_endpoint);
    expect(shown.get("JWKS (public keys)")).toBe(discovery.jwks_uri);
    expect(shown.get("End-session (logout) endpoint")).toBe(discovery.end_session_endpoint);
    expect(shown.get("Introspection endpoint")).toBe(discovery.introspection_endpoint);
    expect(shown.get("Revocation endpoint")).toBe(discovery.revocation_endpoint);
    expect(shown.get("Pushed authorization requests (PAR)")).toBe(discovery.pushed_authorization_request_endpoint);
    // Copying needs script: the buttons come with it (e2e/console-integration.spec.ts); the page itself has the values as text.
    expect(html).not.toContain("Copy Discovery URL");
  });

  it("says it in German on a German console", async () => {
    const html = await (await admin.browser.get(`${porta.baseUrl}/console/organizations/${org.id}`, { "accept-language": "de" })).text();
    expect(html).toContain("Eine App anbinden");
    expect(copyables(html).get("Discovery-URL")).toBe(`${porta.baseUrl}/${org.slug}/.well-known/openid-configuration`);
    const { client } = await createClient(porta.services.db.prisma, org.id, { redirectUris: ["https://app.example.com/callback"] });
    const clientPage = decode(await (await admin.browser.get(`${porta.baseUrl}/console/organizations/${org.id}/clients/${client.id}`, { "accept-language": "de" })).text());
    expect(clientPage).toContain("ID-Tokens sind ausschließlich mit ES256 signiert");
    for (const text of ["Erlaubte CORS-Origins", "Eigener Client: die Einwilligungsseite überspringen", "Gültigkeit der Tokens", "Leer: der Standard, 3600 Sekunden (1 h).", "Web (Browser oder Server)"]) {
      expect(clientPage).toContain(text);
    }
  });
});

describe("the client page's library hint", () => {
  it("tells a code-flow client's developer the two settings libraries need (ES256, response_type code) and where the rest is", async () => {
    const { client } = await createClient(porta.services.db.prisma, org.id, { redirectUris: ["https://app.example.com/callback"] });
    const html = decode(await (await admin.browser.get(`${porta.baseUrl}/console/organizations/${org.id}/clients/${client.id}`)).text());
    expect(html).toContain("ID tokens are signed with ES256 only");
    expect(html).toContain("idTokenSigningAlg: 'ES256'");
    expect(html).toContain("response_type: 'code'");
    expect(html).toContain("docs/integrations.md");
    const machine = await createClient(porta.services.db.prisma, org.id, { grantTypes: ["client_credentials"], scope: "email", redirectUris: [] });
    const machineHtml = decode(await (await admin.browser.get(`${porta.baseUrl}/console/organizations/${org.id}/clients/${machine.client.id}`)).text());
    expect(machineHtml).not.toContain("ID tokens are signed with ES256 only");
  });
});

describe("a client page's quick start", () => {
  it("for a confidential web client: its id and redirect URI, and an authorization request that reaches the login page", async () => {
    const { client } = await createClient(porta.services.db.prisma, org.id, { redirectUris: ["https://app.example.com/callback"] });
    const html = await (await admin.browser.get(`${porta.baseUrl}/console/organizations/${org.id}/clients/${client.id}`)).text();
    expect(copyables(html).get("Client ID")).toBe(client.id);
    expect(html).toContain("<code>https://app.example.com/callback</code>");
    const quickStart = quickStartOf(html);
    expect(quickStart).toContain(`-u '${client.id}:CLIENT_SECRET'`);
    const authorize = quickStart.split("\n").find((line) => line.startsWith("http"))!;
    const request = authorize.replace("STATE", "xyz").replace("CODE_CHALLENGE", "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM");
    const answer = await fetch(request, { redirect: "manual" });
    expect(answer.status).toBe(303);
    expect(answer.headers.get("location")).toMatch(/^\/interaction\//);
  });

  it("for a public client: no secret, its id in the form", async () => {
    const { client } = await createClient(porta.services.db.prisma, org.id, { confidential: false, redirectUris: ["http://127.0.0.1:8080/cb"] });
    const html = await (await admin.browser.get(`${porta.baseUrl}/console/organizations/${org.id}/clients/${client.id}`)).text();
    const quickStart = quickStartOf(html);
    expect(quickStart).toContain(`-d client_id=${client.id}`);
    expect(quickStart).not.toContain("CLIENT_SECRET");
    expect(html).toContain("without a secret");
  });

  it("for a machine client: a client_credentials request that gets a token once the secret is put in", async () => {
    const { client, secret } = await createClient(porta.services.db.prisma, org.id, { grantTypes: ["client_credentials"], redirectUris: [], scope: "email" });
    const html = await (await admin.browser.get(`${porta.baseUrl}/console/organizations/${org.id}/clients/${client.id}`)).text();
    const command = quickStartOf(html).split("\n").find((line) => line.startsWith("curl"))!;
    const [, user, tokenUrl] = /^curl -u '([^']+)' -d grant_type=client_credentials (\S+)$/.exec(command)!;
    expect(user).toBe(`${client.id}:CLIENT_SECRET`);
    const answer = await fetch(tokenUrl!, {
      method: "POST",
      headers: { authorization: `Basic ${Buffer.from(`${client.id}:${secret!.value}`).toString("base64")}`, "content-type": "application/x-www-form-urlencoded" },
      body: "grant_type=client_credentials",
    });
    expect(answer.status).toBe(200);
    expect(((await answer.json()) as { access_token?: string }).access_token).toBeTruthy();
  });
});
