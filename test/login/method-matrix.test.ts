import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createClient } from "../support/factories";
import { startTestPorta, type TestPorta } from "../support/porta";
import { createTenant, htmlLang, loginControls, mainOf, message, openLoginPage } from "./helpers";

/**
 * The spec's login-method matrix: what the login page shows for each set of effective
 * methods, whether the set comes from the organization's default or from the client's
 * override (which wins over the organization).
 */
let porta: TestPorta;
beforeAll(async () => {
  porta = await startTestPorta();
});
afterAll(async () => {
  await porta?.stop();
});

const ROWS = [
  {
    methods: ["password", "magic_link"],
    shows: { emailField: true, passwordField: true, passwordForm: true, magicLinkButton: true, forgotPasswordLink: true },
  },
  {
    methods: ["password"],
    shows: { emailField: true, passwordField: true, passwordForm: true, magicLinkButton: false, forgotPasswordLink: true },
  },
  {
    methods: ["magic_link"],
    shows: { emailField: true, passwordField: false, passwordForm: false, magicLinkButton: true, forgotPasswordLink: false },
  },
] as const;

/** An organization default that differs from the row, so that only the client's override can explain the page. */
const OTHER: Record<string, string[]> = {
  "password,magic_link": ["magic_link"],
  password: ["magic_link"],
  magic_link: ["password"],
};

function expectRow(html: string, uid: string, row: (typeof ROWS)[number]) {
  expect(loginControls(html, uid)).toEqual(row.shows);
  const main = mainOf(html);
  // The visible labels agree with the controls.
  expect(main.includes(message("en", (m) => m.signIn.magicLink))).toBe(row.shows.magicLinkButton);
  expect(main.includes(message("en", (m) => m.signIn.forgotPassword))).toBe(row.shows.forgotPasswordLink);
  expect(main.includes(message("en", (m) => m.signIn.password))).toBe(row.shows.passwordField);
}

describe("organization defaultLoginMethods (client without override)", () => {
  for (const row of ROWS) {
    it(`[${row.methods.join(", ")}] shows ${Object.entries(row.shows)
      .filter(([, shown]) => shown)
      .map(([name]) => name)
      .join(", ")}`, async () => {
      const tenant = await createTenant(porta, { defaultLoginMethods: [...row.methods] });
      const page = await openLoginPage(tenant);
      expect(page.res.status).toBe(200);
      expect(htmlLang(page.html)).toBe("en");
      expectRow(page.html, page.uid, row);
    });
  }
});

describe("client loginMethods override wins over the organization", () => {
  for (const row of ROWS) {
    const orgDefault = OTHER[row.methods.join(",")]!;
    it(`client [${row.methods.join(", ")}] in an organization with [${orgDefault.join(", ")}]`, async () => {
      const tenant = await createTenant(porta, { defaultLoginMethods: orgDefault, clientLoginMethods: [...row.methods] });
      const page = await openLoginPage(tenant);
      expect(page.res.status).toBe(200);
      expectRow(page.html, page.uid, row);
    });
  }

  it("a client override in an organization with both methods narrows the page too", async () => {
    const tenant = await createTenant(porta, { defaultLoginMethods: ["password", "magic_link"], clientLoginMethods: ["password"] });
    const page = await openLoginPage(tenant);
    expectRow(page.html, page.uid, ROWS[1]);
  });

  it("another client of the same organization without an override keeps the organization's methods", async () => {
    const overridden = await createTenant(porta, { defaultLoginMethods: ["password", "magic_link"], clientLoginMethods: ["magic_link"] });
    const { client, secret } = await createClient(porta.services.db.prisma, overridden.org.id);
    const page = await openLoginPage({ ...overridden, client, secret: secret!.value });
    expectRow(page.html, page.uid, ROWS[0]);
  });
});
