import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTenant, followToCallback, openLoginPage, passwordLoginToCallback, PASSWORD, redeem, submitPassword } from "./helpers";
import { startTestPorta, type TestPorta } from "../support/porta";
import { createUser } from "../support/factories";
import { selfPostingForm } from "../support/browser";

/**
 * A browser signed in as one person signs in as another (prompt=login): the provider ends the
 * first session on the way back to the interaction, and the interaction must survive that.
 */
describe("signing in as someone else in the same browser", () => {
  let porta: TestPorta;
  beforeAll(async () => {
    porta = await startTestPorta();
  });
  afterAll(async () => {
    await porta.stop();
  });

  it("ends the first person's session and signs the second in", async () => {
    const t = await createTenant(porta, { client: { skipConsent: true } });
    const prisma = porta.services.db.prisma;
    const [ada, grace] = await Promise.all([createUser(prisma, t.org.id), createUser(prisma, t.org.id)]);
    const first = await openLoginPage(t);
    const { callback } = await passwordLoginToCallback(first, ada.email, PASSWORD, t.redirectUri);
    expect((await redeem(first, callback)).claims()!.sub).toBe(ada.id);

    const second = await openLoginPage(t, { browser: first.browser, extra: { prompt: "login" } });
    expect(second.res.status).toBe(200);
    const posted = await submitPassword(second, grace.email, PASSWORD);
    const back = await followToCallback(second.browser, posted, second.interactionUrl, t.redirectUri);
    // The provider's page that ends Ada's session posts itself (a browser's script does it).
    const form = selfPostingForm(await back.res.text());
    expect(form?.action).toMatch(/\/session\/end\/confirm$/);
    const confirmed = await second.browser.post(form!.action, form!.fields);
    const end = await followToCallback(second.browser, confirmed, form!.action, t.redirectUri);
    expect(end.url.startsWith(t.redirectUri), end.url).toBe(true);
    expect((await redeem(second, new URL(end.url))).claims()!.sub).toBe(grace.id);
  });
});
