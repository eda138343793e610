import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TestBrowser } from "../support/browser";
import { startTestPorta, type TestPorta } from "../support/porta";
import { createAccountTenant, createAccountUser, shown, signInToAccount } from "./helpers";

/** The account page (decision 038) signs in through the organization's own pages, with its own session. */
describe("account page: signing in", () => {
  let porta: TestPorta;
  beforeAll(async () => {
    porta = await startTestPorta();
  });
  afterAll(async () => {
    await porta.stop();
  });

  it("sends a signed-out browser to the organization's sign-in and back, without a consent page", async () => {
    const tenant = await createAccountTenant(porta);
    const user = await createAccountUser(porta, tenant);
    const page = await signInToAccount(tenant, user.email);
    const text = shown(page.html);
    expect(text).toContain(user.email);
    expect(text).toContain("Where you are signed in");
    expect(text).toContain("This browser");
    expect(text).toContain("Signed in (password)");
  });

  it("answers 404 for an organization that does not exist or is suspended", async () => {
    const tenant = await createAccountTenant(porta, { status: "suspended" });
    expect((await new TestBrowser().get(tenant.accountUrl)).status).toBe(404);
    expect((await new TestBrowser().get(`${porta.baseUrl}/no-such-org-here/account`)).status).toBe(404);
  });
});
