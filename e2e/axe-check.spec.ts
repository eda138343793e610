import { expect, test } from "@playwright/test";
import { checkPage } from "./journey-helpers";

/**
 * The accessibility check that every journey relies on must itself fail on a serious finding:
 * a login page with an unlabelled text field and an image without a text alternative, inserted
 * into the real page (also inside a same-origin frame, which the check must reach).
 */
test("the axe check fails on an unlabelled field and an image without alt text, in the page and in its frame", async ({ page }, testInfo) => {
  await page.goto("/health");
  await page.setContent(`<!doctype html><html lang="en"><head><title>Check</title></head><body><main><h1>Check</h1>
    <input type="text" name="nameless"><img src="data:image/gif;base64,R0lGODlhAQABAAAAACw=">
    <iframe title="inner" srcdoc="<!doctype html><html lang=en><title>inner</title><body><main><button></button></main></body></html>"></iframe>
  </main></body></html>`);
  await page.frameLocator("iframe").locator("button").waitFor({ state: "attached" });
  const failure = await checkPage(page, testInfo, "axe-must-fail").then(
    () => null,
    (error: Error) => error.message,
  );
  expect(failure).toContain("label");
  expect(failure).toContain("image-alt");
  expect(failure).toContain("button-name");
});
