import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { adminApi, obtainAdminTokens } from "../support/admin-api";
import { createOrganization } from "../support/factories";
import { startTestPorta, type TestPorta } from "../support/porta";
import { consoleSignIn, pageWithCsrf, type ConsoleVisit } from "./helpers";

/**
 * The console's client registration page (decision 054): an administrator turns registration on,
 * issues an initial access token (shown once, and it registers a client), and revokes it; bad
 * input writes nothing.
 */
let porta: TestPorta;
let admin: ConsoleVisit;
let api: ReturnType<typeof adminApi>;

beforeAll(async () => {
  porta = await startTestPorta();
  admin = await consoleSignIn(porta);
  api = adminApi(porta, (await obtainAdminTokens(porta)).accessToken);
});
afterAll(async () => {
  await porta?.stop();
});

const textOf = (html: string) => html.replace(/<script[\s\S]*?<\/script>/g, " ").replace(/<[^>]+>/g, " ").replaceAll("&#x27;", "'").replaceAll("&amp;", "&").replace(/\s+/g, " ");
const versionOf = (html: string) => /name="version" value="(\d+)"/.exec(html)![1]!;

describe("console client registration page", () => {
  it("turns registration on, issues a token once that registers a client, and revokes it", async () => {
    const org = await createOrganization(porta.services.db.prisma);
    const url = `${porta.baseUrl}/console/organizations/${org.id}/registration`;
    const orgPage = await (await admin.browser.get(`${porta.baseUrl}/console/organizations/${org.id}`)).text();
    expect(orgPage).toContain(`href="/console/organizations/${org.id}/registration"`);
    const first = await pageWithCsrf(admin.browser, url);
    expect(first.res.status).toBe(200);
    expect(textOf(first.html)).toContain(`register their own clients at /${org.slug}/register`);
    expect(textOf(first.html)).toContain("No initial access tokens yet.");

    const saved = await admin.browser.post(url, {
      csrf: first.csrf,
      intent: "policy",
      version: versionOf(first.html),
      enabled: "on",
      requireInitialAccessToken: "on",
      allowedGrantTypes: "authorization_code",
      allowedTokenEndpointAuthMethods: "none",
      documentsEnabled: "on",
      allowedDomains: "agents.example.com\n*.tools.example.com",
    });
    expect(saved.status).toBe(302);
    expect((await api.get(`/organizations/${org.id}/registration-policy`)).body).toEqual({
      enabled: true,
      requireInitialAccessToken: true,
      allowedGrantTypes: ["authorization_code"],
      allowedTokenEndpointAuthMethods: ["none"],
      clientIdMetadataDocuments: { enabled: true, allowedDomains: ["agents.example.com", "*.tools.example.com"] },
    });
    // A domain that is not one is refused next to the field, and nothing changes.
    const again = await pageWithCsrf(admin.browser, url);
    expect(again.html).toContain("agents.example.com\n*.tools.example.com");
    const refused = await admin.browser.post(url, { csrf: again.csrf, intent: "policy", version: versionOf(again.html), enabled: "on", allowedGrantTypes: "authorization_code", allowedTokenEndpointAuthMethods: "none", documentsEnabled: "on", allowedDomains: "https://evil.example.com/x" });
    expect(refused.status).toBe(422);
    expect(textOf(await refused.text())).toContain("must be a lower-case domain name");
    expect((await api.get(`/organizations/${org.id}/registration-policy`)).body).toMatchObject({ requireInitialAccessToken: true, clientIdMetadataDocuments: { enabled: true } });

    const page = await pageWithCsrf(admin.browser, url);
    const issued = await admin.browser.post(url, { csrf: page.csrf, intent: "issue", label: "Agents", expiresInDays: "2", maxUses: "3" });
    expect(issued.status).toBe(200);
    expect(issued.headers.get("cache-control")).toBe("no-store");
    const token = /id="registration-token" readonly="" class="secret-value" value="([^"]+)"/.exec(await issued.text())?.[1];
    expect(token).toBeTruthy();
    const registered = await fetch(`${porta.baseUrl}/${org.slug}/register`, {
      method: "POST",
      headers: { authorization: `Bearer ${token!}`, "content-type": "application/json" },
      body: JSON.stringify({ redirect_uris: ["http://127.0.0.1:9/cb"], token_endpoint_auth_method: "none" }),
    });
    expect(registered.status).toBe(201);

    const listed = await pageWithCsrf(admin.browser, url);
    const text = textOf(listed.html);
    expect(text).toContain(`…${token!.slice(-4)} Agents 1 / 3`);
    expect(listed.html).not.toContain(token!);
    const [row] = (await api.get<{ data: Array<{ id: string }> }>(`/organizations/${org.id}/registration-tokens`)).body.data;
    expect((await admin.browser.post(url, { csrf: listed.csrf, intent: "revoke", tokenId: row!.id })).status).toBe(302);
    expect(textOf((await pageWithCsrf(admin.browser, url)).html)).toContain("Agents 1 / 3");
    expect((await api.get<{ data: Array<{ status: string }> }>(`/organizations/${org.id}/registration-tokens`)).body.data[0]!.status).toBe("revoked");
  });

  it("writes nothing for bad input and says why next to the field", async () => {
    const org = await createOrganization(porta.services.db.prisma);
    const url = `${porta.baseUrl}/console/organizations/${org.id}/registration`;
    const page = await pageWithCsrf(admin.browser, url);
    const noGrants = await admin.browser.post(url, { csrf: page.csrf, intent: "policy", version: versionOf(page.html), enabled: "on", allowedTokenEndpointAuthMethods: "none" });
    expect(noGrants.status).toBe(422);
    expect(textOf(await noGrants.text())).toContain("needs at least one grant type");
    expect((await api.get<{ enabled: boolean }>(`/organizations/${org.id}/registration-policy`)).body.enabled).toBe(false);
    const badUses = await admin.browser.post(url, { csrf: page.csrf, intent: "issue", expiresInDays: "1", maxUses: "0" });
    expect(badUses.status).toBe(422);
    expect(textOf(await badUses.text())).toContain("must be at least 1");
    expect(await porta.services.db.prisma.registrationToken.count({ where: { organizationId: org.id } })).toBe(0);
  });
});
