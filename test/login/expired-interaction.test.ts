import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { invalidateOrganization } from "~/.server/directory/organizations";
import { interactionOrgKey, lookupInteractionOrganization, lookupInteractionOrigin } from "~/.server/oidc/storage/adapter";
import { TestBrowser } from "../support/browser";
import { createUser } from "../support/factories";
import { startTestPorta, type TestPorta } from "../support/porta";
import { createTenant, escapeHtml, htmlLang, mainOf, message, openLoginPage, PASSWORD, passwordLoginToCallback, type LoginPage, type Tenant } from "./helpers";

/**
 * Expired or finished flows (decision 035): /interaction/:uid of a sign-in that expired, finished
 * or belongs to another browser is no dead end. The URL names no organization, but the uid's index
 * outlives the interaction (decision 035): the page is branded for the sign-in's organization,
 * says what happened and offers the application's own sign-in start. It stays the 400 every
 * interaction route answers, and when nothing is known it is the plain page, with no button.
 */
let porta: TestPorta;
let tenant: Tenant;
let email: string;

beforeAll(async () => {
  porta = await startTestPorta();
  tenant = await createTenant(porta, {
    defaultLoginMethods: ["password"],
    name: "Expired Example",
    branding: { displayName: "Acme Sign-in", primaryColor: "#123456" },
  });
  email = (await createUser(porta.services.db.prisma, tenant.org.id, { password: PASSWORD })).email;
});
afterAll(async () => {
  await porta?.stop();
});

const brandShown = (main: string) => main.includes(`<p class="brand-name">Acme Sign-in</p>`);
const buttonTo = (main: string) => /<a class="button" href="([^"]*)">([^<]*)<\/a>/.exec(main);

/** Lets the interaction's lifetime pass: its record and the index's "open" period, as the clock would. */
async function letExpire(page: LoginPage) {
  await porta.services.db.executeSql(`UPDATE "EphemeralEntry" SET "expiresAt" = now() - interval '1 second' WHERE "key" LIKE $1::text`, [
    `oidc:${tenant.org.id}:Interaction:%`,
  ]);
  const stored = JSON.parse((await porta.services.store.get(interactionOrgKey(page.uid)))!) as { openUntil: number };
  await porta.services.store.replace(interactionOrgKey(page.uid), JSON.stringify({ ...stored, openUntil: Date.now() - 1000 }));
}

describe("an interaction page that can no longer continue", () => {
  it("after the sign-in expired: branded, says so, and offers the application's sign-in (en)", async () => {
    const page = await openLoginPage(tenant);
    await letExpire(page);
    expect(await lookupInteractionOrganization(porta.services.store, page.uid)).toBeNull();

    const res = await page.browser.get(page.interactionUrl);
    expect(res.status).toBe(400);
    expect(res.headers.get("cache-control")).toBe("no-store");
    const html = await res.text();
    const main = mainOf(html);
    expect(htmlLang(html)).toBe("en");
    expect(brandShown(main)).toBe(true);
    expect(main).toContain("--porta-primary:#123456");
    expect(main).toContain(message("en", (m) => m.expired.title));
    expect(main).toContain(message("en", (m) => m.expired.body));
    expect(buttonTo(main)?.slice(1)).toEqual(["https://rp.example.com/", message("en", (m) => m.reset.signInTo, { client: "Test client" })]);
  });

  it("after the sign-in finished, when the browser goes back to it: the same page, in German for a German browser", async () => {
    const page = await openLoginPage(tenant, { headers: { "Accept-Language": "de-DE,de;q=0.9" } });
    await passwordLoginToCallback(page, email, PASSWORD, tenant.redirectUri);

    const res = await page.browser.get(page.interactionUrl);
    expect(res.status).toBe(400);
    const html = await res.text();
    const main = mainOf(html);
    expect(htmlLang(html)).toBe("de");
    expect(brandShown(main)).toBe(true);
    expect(main).toContain(message("de", (m) => m.expired.title));
    expect(main).toContain(message("de", (m) => m.expired.body));
    expect(buttonTo(main)?.slice(1)).toEqual(["https://rp.example.com/", message("de", (m) => m.reset.signInTo, { client: "Test client" })]);
  });

  it("in another browser than the one that started it: the same page, and the sign-in goes on in its own browser", async () => {
    const page = await openLoginPage(tenant);
    const stranger = await new TestBrowser().get(page.interactionUrl);
    expect(stranger.status).toBe(400);
    const main = mainOf(await stranger.text());
    expect(brandShown(main)).toBe(true);
    expect(buttonTo(main)?.[1]).toBe("https://rp.example.com/");
    const { callback } = await passwordLoginToCallback(page, email, PASSWORD, tenant.redirectUri);
    expect(callback.searchParams.get("code")).toBeTruthy();
  });

  it("with the organization's default language when the browser asks for none Porta has", async () => {
    const german = await createTenant(porta, { defaultLoginMethods: ["password"], defaultLocale: "de" });
    const page = await openLoginPage(german, { headers: { "Accept-Language": "fr" } });
    const stranger = await new TestBrowser({ "Accept-Language": "fr" }).get(page.interactionUrl);
    const html = await stranger.text();
    expect(stranger.status).toBe(400);
    expect(htmlLang(html)).toBe("de");
    expect(mainOf(html)).toContain(message("de", (m) => m.expired.title));
  });

  it("for an unknown uid: the plain page, with no organization and no button", async () => {
    const res = await new TestBrowser().get(`${porta.baseUrl}/interaction/no-such-interaction-uid`);
    expect(res.status).toBe(400);
    const main = mainOf(await res.text());
    expect(main).toContain(message("en", (m) => m.expired.title));
    expect(main).toContain(message("en", (m) => m.expired.body));
    expect(main).not.toContain("brand");
    expect(buttonTo(main)).toBeNull();
  });

  it("names no organization once it is suspended, and offers no way back to a client that is not active or has no web address", async () => {
    const suspended = await createTenant(porta, { defaultLoginMethods: ["password"], name: "Soon Suspended" });
    const page = await openLoginPage(suspended);
    await porta.services.db.prisma.organization.update({ where: { id: suspended.org.id }, data: { status: "suspended" } });
    await invalidateOrganization(porta.services.cache, suspended.org);

    const nativeApp = await createTenant(porta, {
      defaultLoginMethods: ["password"],
      name: "Native Example",
      client: { redirectUris: ["com.example.app:/callback"], applicationType: "native", confidential: false },
    });
    const nativePage = await openLoginPage(nativeApp, { redirectUri: "com.example.app:/callback" });
    const native = mainOf(await (await new TestBrowser().get(nativePage.interactionUrl)).text());
    expect(native).toContain(`<p class="brand-name">Native Example</p>`);
    expect(buttonTo(native)).toBeNull();

    const res = await new TestBrowser().get(page.interactionUrl);
    expect(res.status).toBe(400);
    const main = mainOf(await res.text());
    expect(main).not.toContain(escapeHtml("Soon Suspended"));
    expect(buttonTo(main)).toBeNull();
  });

  it("keeps the uid's organization and client, hashed, for a day after the interaction, but no longer treats it as open", async () => {
    const page = await openLoginPage(tenant);
    const rows = (await porta.services.db.executeSql(`SELECT "key", "value", "expiresAt" FROM "EphemeralEntry" WHERE "key" = $1::text`, [interactionOrgKey(page.uid)]))
      .rows as Array<{ key: string; value: string; expiresAt: Date | string }>;
    expect(rows).toHaveLength(1);
    expect(rows[0]!.key).not.toContain(page.uid);
    expect(JSON.parse(rows[0]!.value)).toMatchObject({ organizationId: tenant.org.id, clientId: tenant.client.id });
    const lifetimeHours = (new Date(rows[0]!.expiresAt).getTime() - Date.now()) / 3_600_000;
    expect(lifetimeHours).toBeGreaterThan(24);
    expect(lifetimeHours).toBeLessThan(26);

    expect(await lookupInteractionOrganization(porta.services.store, page.uid)).toBe(tenant.org.id);
    await letExpire(page);
    expect(await lookupInteractionOrganization(porta.services.store, page.uid)).toBeNull();
    expect(await lookupInteractionOrigin(porta.services.store, page.uid)).toEqual({ organizationId: tenant.org.id, clientId: tenant.client.id, open: false });
  });

  it("reads an index written before it carried the client (the bare organization id) as an open sign-in", async () => {
    await porta.services.store.set(interactionOrgKey("legacy-uid"), tenant.org.id, 60);
    expect(await lookupInteractionOrganization(porta.services.store, "legacy-uid")).toBe(tenant.org.id);
    expect(await lookupInteractionOrigin(porta.services.store, "legacy-uid")).toEqual({ organizationId: tenant.org.id, clientId: null, open: true });
    // Its page is branded, with no button: no client is known.
    const main = mainOf(await (await new TestBrowser().get(`${porta.baseUrl}/interaction/legacy-uid`)).text());
    expect(brandShown(main)).toBe(true);
    expect(buttonTo(main)).toBeNull();
  });
});
