import { readFileSync } from "node:fs";
import { expect, test } from "@playwright/test";
import * as oidc from "openid-client";
import type english from "../public/locales/en/login.json";
import { watchForPageErrors } from "./console-helpers";
import { callbackAfter, discover, gotoAfterCallback, screenshot, startAuthorization } from "./journey-helpers";
import { readSeed, type Seed } from "./seed";

/**
 * Posted protocol requests (decision 043) in a real browser: a relying party on another site signs a person in by POSTing
 * its authorization request (OpenID Connect Core §3.1.2.1), and later signs them out by POSTing
 * to the end-session endpoint. Porta keeps its session cookie SameSite=Lax (decision 043): the
 * POST is parked and continued by a top-level GET, which carries the cookie, so a person who is
 * signed in is not asked again, and nothing the relying party posted shows in the address bar.
 */
type Messages = typeof english;
const en = JSON.parse(readFileSync(new URL("../public/locales/en/login.json", import.meta.url), "utf8")) as Messages;

let seed: Seed;
test.beforeAll(async () => {
  seed = await readSeed();
});

/** An auto-submitting form on the relying party's own (cross-site) page. */
function postingPage(action: string, fields: Record<string, string>): string {
  const inputs = Object.entries(fields)
    .map(([name, value]) => `<input type="hidden" name="${name}" value="${value.replace(/"/g, "&quot;")}">`)
    .join("");
  return `<!doctype html><html lang=en><title>Relying party</title><form method="post" action="${action}">${inputs}<button>Continue</button></form><script>document.forms[0].submit()</script></html>`;
}

test("a relying party on another site POSTs its sign-in and sign-out requests; the session carries across", async ({ browser }, testInfo) => {
  const org = seed.organizations.find((o) => o.row === "password")!;
  const context = await browser.newContext({ locale: "en-US" });
  const posted: Record<string, string> = {};
  await context.route("http://rp.example.test/**", (route) => route.fulfill({ status: 200, contentType: "text/html", body: posted[new URL(route.request().url()).pathname] ?? "<h1>Relying party</h1>" }));
  await context.route("https://rp.example.test/**", (route) =>
    route.fulfill({ status: 200, contentType: "text/html", body: "<!doctype html><html lang=en><title>Relying party</title><h1>Back at the relying party</h1></html>" }),
  );
  try {
    const page = await context.newPage();
    const problems = watchForPageErrors(page);
    const config = await discover(org);

    // First sign-in: POSTed, so the person signs in (and consents) once.
    const first = await startAuthorization(org);
    posted["/sign-in"] = postingPage(config.serverMetadata().authorization_endpoint!, Object.fromEntries(first.url.searchParams));
    await page.goto("http://rp.example.test/sign-in");
    await expect(page).toHaveURL(/\/interaction\//);
    expect(page.url()).not.toContain(first.state);
    await screenshot(page, testInfo, "post-authorize-login");
    await page.getByLabel(en.signIn.email, { exact: true }).fill(org.user.email);
    await page.getByLabel(en.signIn.password, { exact: true }).fill(org.user.password);
    const firstCallback = await callbackAfter(page, org.redirectUri, async () => {
      await page.getByRole("button", { name: en.signIn.submit }).click();
      const allow = page.getByRole("button", { name: en.consent.allow });
      await allow.or(page.getByRole("heading", { name: "Back at the relying party" })).first().waitFor();
      if (await allow.isVisible()) await allow.click();
    });
    const tokens = await oidc.authorizationCodeGrant(first.config, firstCallback, { pkceCodeVerifier: first.verifier, expectedState: first.state });
    expect(tokens.claims()?.sub).toBe(org.user.id);

    // Second sign-in, POSTed from the other site again: the Lax session cookie rides the GET, no login page.
    const second = await startAuthorization(org);
    posted["/again"] = postingPage(config.serverMetadata().authorization_endpoint!, Object.fromEntries(second.url.searchParams));
    const interactions: string[] = [];
    page.on("request", (request) => {
      if (request.isNavigationRequest() && request.url().includes("/interaction/")) interactions.push(request.url());
    });
    const secondCallback = await callbackAfter(page, org.redirectUri, () => page.goto("http://rp.example.test/again"));
    expect(interactions).toEqual([]);
    const again = await oidc.authorizationCodeGrant(second.config, secondCallback, { pkceCodeVerifier: second.verifier, expectedState: second.state });
    expect(again.claims()?.sub).toBe(org.user.id);

    // Sign-out, POSTed: the ID token never shows in the address bar; the confirmation signs the person out.
    posted["/sign-out"] = postingPage(config.serverMetadata().end_session_endpoint!, { id_token_hint: again.id_token!, state: "bye" });
    await gotoAfterCallback(page, "http://rp.example.test/sign-out", org.redirectUri);
    await expect(page.getByRole("heading", { level: 1 })).toHaveText(en.providerPages.logoutHeading);
    expect(page.url()).not.toContain(again.id_token!.split(".")[1]!);
    await screenshot(page, testInfo, "post-end-session-confirm");
    await page.getByRole("button", { name: en.providerPages.logoutYes }).click();
    await expect(page.getByRole("heading", { level: 1 })).toHaveText(en.providerPages.signedOutHeading);

    // Signed out: the next POSTed sign-in asks for the password again.
    const third = await startAuthorization(org);
    posted["/after"] = postingPage(config.serverMetadata().authorization_endpoint!, Object.fromEntries(third.url.searchParams));
    await page.goto("http://rp.example.test/after");
    await expect(page).toHaveURL(/\/interaction\//);
    await expect(page.getByLabel(en.signIn.password, { exact: true })).toBeVisible();
    expect(problems).toEqual([]);
  } finally {
    await context.close();
  }
});
