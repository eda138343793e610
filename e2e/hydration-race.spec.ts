import { expect, test } from "@playwright/test";
import { watchForPageErrors } from "./console-helpers";
import { startAuthorization } from "./journey-helpers";
import { readSeed } from "./seed";

/**
 * A person who types and sends a form before the page has hydrated (a slow phone): the form
 * works without script, and the page must not throw. With single fetch, React answered such an
 * event by hydrating at once while Remix still waited for its data, and failed the whole
 * document ("Root did not complete", React error #345; remix-run/remix#10214), which the
 * password-reset journey met now and then. The CPU is slowed six times so that the race is met
 * on every run, not by chance.
 */
test("typing and sending a form before the page has hydrated throws nothing and still sends it", async ({ browser }) => {
  const seed = await readSeed();
  const org = seed.organizations.find((o) => o.row === "password+magic_link")!;
  for (let round = 0; round < 6; round++) {
    const context = await browser.newContext();
    try {
      const page = await context.newPage();
      const cdp = await context.newCDPSession(page);
      await cdp.send("Emulation.setCPUThrottlingRate", { rate: 6 });
      const problems = watchForPageErrors(page);
      const rp = await startAuthorization(org);
      await page.goto(rp.url.href, { waitUntil: "commit" });
      await page.waitForURL(/\/interaction\//);
      const forgot = page.url().replace(/(\/interaction\/[^/?]+).*/, "$1/forgot-password");
      // Not waiting for the page to load: the person types as soon as the field is there.
      await page.goto(forgot, { waitUntil: "commit" });
      await page.locator("input[name=email]").fill(`nobody-${round}@example.com`);
      await page.locator("button[type=submit]").click();
      await page.waitForLoadState("load");
      await expect(page.getByRole("status")).toContainText(`nobody-${round}@example.com`);
      expect(problems, `round ${round}`).toEqual([]);
    } finally {
      await context.close();
    }
  }
});
