import { readFileSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createOrganization } from "../support/factories";
import { startTestPorta, type TestPorta } from "../support/porta";
import { createTenant } from "../admin/helpers";
import { consoleSignIn, type ConsoleVisit } from "./helpers";

/**
 * The dashboard's figures add up (decision 040): deleted organizations are not counted, the
 * counts read as words with the right plural ("1 organization"), in English and in German, and
 * an empty login chart says that there were none instead of a made-up scale.
 */
let porta: TestPorta;
let english: ConsoleVisit;
let german: ConsoleVisit;

beforeAll(async () => {
  porta = await startTestPorta();
  english = await consoleSignIn(porta, undefined, "/console", { "accept-language": "en" });
  german = await consoleSignIn(porta, undefined, "/console", { "accept-language": "de" });
});
afterAll(async () => {
  await porta?.stop();
});

const html = async (visit: ConsoleVisit, path: string) => (await visit.browser.get(`${porta.baseUrl}${path}`)).text();
/** The big figure of the dashboard's panel titled `title`. */
const figureOf = (page: string, title: string) => new RegExp(`>${title}</h2><p class="figure">([^<]*)</p>`).exec(page)?.[1];

describe("dashboard figures", () => {
  it("counts one organization in the singular, leaves deleted ones out, and says it in German too", async () => {
    // A fresh Porta holds the super-admin organization only; a deleted one is not counted.
    await createOrganization(porta.services.db.prisma, { status: "deleted" });
    expect(figureOf(await html(english, "/console"), "Organizations")).toBe("1 organization");
    expect(figureOf(await html(german, "/console"), "Organisationen")).toBe("1 Organisation");
    expect(figureOf(await html(english, "/console"), "Active users")).toBe("1 active user");
    expect(figureOf(await html(german, "/console"), "Aktive Benutzer")).toBe("1 aktiver Benutzer");

    await createOrganization(porta.services.db.prisma, { status: "suspended" });
    const page = await html(english, "/console");
    expect(figureOf(page, "Organizations")).toBe("2 organizations");
    expect(figureOf(await html(german, "/console"), "Organisationen")).toBe("2 Organisationen");
    // The chart's rows add up to the figure: one active, one suspended, and no row for deleted ones.
    expect(page).toMatch(/<th scope="row">active<\/th><td>.*?<span class="bar-value">1<\/span>/);
    expect(page).toMatch(/<th scope="row">suspended<\/th><td>.*?<span class="bar-value">1<\/span>/);
  });

  it("an organization without logins says so on its chart, in either language, instead of a scale of one", async () => {
    const tenant = await createTenant(porta);
    const en = await html(english, `/console/organizations/${tenant.org.id}`);
    expect(en).toContain("no logins in these days");
    expect(en).not.toContain("highest: 1 per day");
    expect(await html(german, `/console/organizations/${tenant.org.id}`)).toContain("keine Anmeldungen in diesen Tagen");
  });
});

describe("the console's footer", () => {
  it("names the release (package.json's version) on every page, in either language", async () => {
    const release = (JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8")) as { version: string }).version;
    const footerOf = (page: string) => /<footer class="console-footer">([\s\S]*?)<\/footer>/.exec(page)?.[1];
    for (const path of ["/console", "/console/organizations", "/console/audit"]) {
      expect(footerOf(await html(english, path))).toBe(`<p>Porta, release ${release}</p>`);
      expect(footerOf(await html(german, path))).toBe(`<p>Porta, Version ${release}</p>`);
    }
  });
});
