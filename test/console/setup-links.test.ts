import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TestBrowser } from "../support/browser";
import { createOrganization } from "../support/factories";
import { startTestPorta, type TestPorta } from "../support/porta";
import { consoleSignIn, pageWithCsrf, type ConsoleVisit } from "./helpers";

/**
 * The console's setup links page (decision 089): a link created and its URL shown once, listed by
 * status without it, and revoked; bad input and another organization's link change nothing.
 */
let porta: TestPorta;
let admin: ConsoleVisit;

beforeAll(async () => {
  porta = await startTestPorta();
  admin = await consoleSignIn(porta);
});
afterAll(async () => {
  await porta?.stop();
});

const textOf = (html: string) => html.replace(/<script[\s\S]*?<\/script>/g, " ").replace(/<[^>]+>/g, " ").replaceAll("&#x27;", "'").replaceAll("&amp;", "&").replace(/\s+/g, " ");

describe("console setup links page", () => {
  it("creates a link whose URL is shown once and opens the setup page, lists it by status without the URL, and revokes it", async () => {
    const org = await createOrganization(porta.services.db.prisma);
    const url = `${porta.baseUrl}/console/organizations/${org.id}/setup-links`;
    const orgPage = await (await admin.browser.get(`${porta.baseUrl}/console/organizations/${org.id}`)).text();
    expect(orgPage).toContain(`href="/console/organizations/${org.id}/setup-links"`);
    const first = await pageWithCsrf(admin.browser, url);
    expect(first.res.status).toBe(200);
    expect(textOf(first.html)).toContain("No setup links yet.");

    const created = await admin.browser.post(url, { csrf: first.csrf, intent: "create", note: "Jane, Acme IT", expiresInDays: "3" });
    expect(created.status).toBe(200);
    expect(created.headers.get("cache-control")).toBe("no-store");
    const link = /id="setup-url" readonly="" class="secret-value" value="([^"]+)"/.exec(await created.text())?.[1]?.replaceAll("&amp;", "&");
    expect(link).toMatch(new RegExp(`^${porta.baseUrl}/${org.slug}/setup\\?token=[A-Za-z0-9_-]{43}$`));
    const opened = await new TestBrowser().get(link!);
    expect(opened.status).toBe(303);

    const listed = await pageWithCsrf(admin.browser, url);
    expect(textOf(listed.html)).toContain("Jane, Acme IT Opened");
    expect(listed.html).not.toContain(new URL(link!).searchParams.get("token")!);
    const row = await porta.services.db.prisma.setupLink.findFirstOrThrow({ where: { organizationId: org.id } });
    const revoked = await admin.browser.post(url, { csrf: listed.csrf, intent: "revoke", linkId: row.id });
    expect(revoked.status).toBe(302);
    expect(revoked.headers.get("location")).toBe(`/console/organizations/${org.id}/setup-links?done=revoked`);
    const text = textOf((await pageWithCsrf(admin.browser, `${url}?done=revoked`)).html);
    expect(text).toContain("The setup link was revoked.");
    expect(text).toContain("Jane, Acme IT Revoked");
    expect((await new TestBrowser().get(link!)).status).toBe(403);
  });

  it("writes nothing for bad input, and revokes no link of another organization", async () => {
    const org = await createOrganization(porta.services.db.prisma);
    const other = await createOrganization(porta.services.db.prisma);
    const theirs = await porta.services.db.prisma.setupLink.create({ data: { organizationId: other.id, tokenHash: "f".repeat(64), expiresAt: new Date(Date.now() + 86_400_000) } });
    const url = `${porta.baseUrl}/console/organizations/${org.id}/setup-links`;
    const page = await pageWithCsrf(admin.browser, url);
    const tooLong = await admin.browser.post(url, { csrf: page.csrf, intent: "create", expiresInDays: "31" });
    expect(tooLong.status).toBe(422);
    expect(textOf(await tooLong.text())).toContain("must be at most 30 days");
    expect(await porta.services.db.prisma.setupLink.count({ where: { organizationId: org.id } })).toBe(0);
    const foreign = await admin.browser.post(url, { csrf: page.csrf, intent: "revoke", linkId: theirs.id });
    expect(foreign.status).toBe(404);
    expect((await porta.services.db.prisma.setupLink.findUniqueOrThrow({ where: { id: theirs.id } })).revokedAt).toBeNull();
  });
});
