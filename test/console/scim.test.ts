import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { adminApi, obtainAdminTokens } from "../support/admin-api";
import { createOrganization } from "../support/factories";
import { startTestPorta, type TestPorta } from "../support/porta";
import { consoleSignIn, pageWithCsrf, type ConsoleVisit } from "./helpers";

/**
 * The console's SCIM page (decision 084): the organization's SCIM base URL, a token issued and
 * shown once that opens the endpoint, and revoked; bad input and another organization's token
 * change nothing.
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

describe("console SCIM page", () => {
  it("shows the base URL, issues a token once that opens the endpoint, lists it without its value and revokes it", async () => {
    const org = await createOrganization(porta.services.db.prisma);
    const url = `${porta.baseUrl}/console/organizations/${org.id}/scim`;
    const orgPage = await (await admin.browser.get(`${porta.baseUrl}/console/organizations/${org.id}`)).text();
    expect(orgPage).toContain(`href="/console/organizations/${org.id}/scim"`);
    const first = await pageWithCsrf(admin.browser, url);
    expect(first.res.status).toBe(200);
    expect(first.html).toContain(`value="${porta.baseUrl}/${org.slug}/scim/v2"`);
    expect(textOf(first.html)).toContain("No SCIM tokens yet.");

    const issued = await admin.browser.post(url, { csrf: first.csrf, intent: "issue", name: "Entra ID", expiresInDays: "30" });
    expect(issued.status).toBe(200);
    expect(issued.headers.get("cache-control")).toBe("no-store");
    const token = /id="scim-token" readonly="" class="secret-value" value="([^"]+)"/.exec(await issued.text())?.[1];
    expect(token).toMatch(/^porta_scim_/);
    const users = await fetch(`${porta.baseUrl}/${org.slug}/scim/v2/Users`, { headers: { authorization: `Bearer ${token!}` } });
    expect(users.status).toBe(200);

    const listed = await pageWithCsrf(admin.browser, url);
    expect(textOf(listed.html)).toContain(`Entra ID ${token!.slice(0, 15)}…`);
    expect(listed.html).not.toContain(token!);
    const [row] = (await api.get<{ data: Array<{ id: string }> }>(`/organizations/${org.id}/scim-tokens`)).body.data;
    const revoked = await admin.browser.post(url, { csrf: listed.csrf, intent: "revoke", tokenId: row!.id });
    expect(revoked.status).toBe(302);
    expect(revoked.headers.get("location")).toBe(`/console/organizations/${org.id}/scim?done=revoked`);
    const text = textOf((await pageWithCsrf(admin.browser, `${url}?done=revoked`)).html);
    expect(text).toContain("The token was revoked.");
    expect(text).toMatch(/Entra ID porta_scim_\S+… .* revoked/);
    const after = await fetch(`${porta.baseUrl}/${org.slug}/scim/v2/Users`, { headers: { authorization: `Bearer ${token!}` } });
    expect(after.status).toBe(401);
  });

  it("writes nothing for bad input, and revokes no token of another organization", async () => {
    const org = await createOrganization(porta.services.db.prisma);
    const other = await createOrganization(porta.services.db.prisma);
    const theirs = (await api.post<{ id: string }>(`/organizations/${other.id}/scim-tokens`, { name: "theirs" })).body;
    const url = `${porta.baseUrl}/console/organizations/${org.id}/scim`;
    const page = await pageWithCsrf(admin.browser, url);
    const tooLong = await admin.browser.post(url, { csrf: page.csrf, intent: "issue", name: "x", expiresInDays: "400" });
    expect(tooLong.status).toBe(422);
    expect(textOf(await tooLong.text())).toContain("must be at most 365 days");
    const noName = await admin.browser.post(url, { csrf: page.csrf, intent: "issue", name: "", expiresInDays: "30" });
    expect(noName.status).toBe(422);
    expect(await porta.services.db.prisma.scimToken.count({ where: { organizationId: org.id } })).toBe(0);
    const foreign = await admin.browser.post(url, { csrf: page.csrf, intent: "revoke", tokenId: theirs.id });
    expect(foreign.status).toBe(404);
    expect((await api.get<{ status: string }>(`/scim-tokens/${theirs.id}`)).body.status).toBe("active");
  });
});
