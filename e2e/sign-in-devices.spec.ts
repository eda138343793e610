import { expect, test } from "@playwright/test";
import { check, signInToConsole, signOutOfConsole, watchForPageErrors } from "./console-helpers";
import { CONSOLE_ADMINS, readSeed, type Seed } from "./seed";

/**
 * What a first-time operator and a person with two devices see in Chromium: an administrator
 * whose address is on a single-label domain (as the printed admin@localhost) signs in to the
 * console, and signing out on one device leaves the other signed in (one grant per sign-in).
 */
let seed: Seed;
test.beforeAll(async () => {
  seed = await readSeed();
});

test("an admin@localhost-style address signs in, and signing out on one device keeps the other signed in", async ({ browser }, testInfo) => {
  const person = CONSOLE_ADMINS.devices;
  const laptop = await browser.newContext();
  const phone = await browser.newContext();
  try {
    const first = await laptop.newPage();
    const problems = watchForPageErrors(first);
    await signInToConsole(first, seed, person);
    await check(first, testInfo, "devices-laptop-dashboard");

    const second = await phone.newPage();
    await signInToConsole(second, seed, person);

    await signOutOfConsole(first);
    await expect(first.getByRole("heading", { level: 1 })).toHaveText("Signed out");
    await check(first, testInfo, "devices-laptop-signed-out");

    // The other device's console keeps working: its tokens belong to its own sign-in.
    await second.getByRole("navigation", { name: "Console" }).getByRole("link", { name: "Organizations" }).click();
    await expect(second.getByRole("heading", { level: 1 })).toHaveText("Organizations");
    await second.reload();
    await expect(second).toHaveURL(/\/console\/organizations$/);
    await expect(second.getByRole("heading", { level: 1 })).toHaveText("Organizations");
    await check(second, testInfo, "devices-phone-still-signed-in");
    expect(problems).toEqual([]);
  } finally {
    await laptop.close();
    await phone.close();
  }
});
