import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createUser } from "../support/factories";
import { startTestPorta, type TestPorta } from "../support/porta";
import { unique } from "../admin/helpers";
import { consoleSignIn, pageWithCsrf, type ConsoleVisit } from "./helpers";

/**
 * The console's lockout and invitation pages in German, as a German-speaking operator reads them
 * (decision 040): "Gesperrt bis …" with Entsperren, the locked filter, and a second invitation
 * to a pending address refused beside the email field. The English journey is e2e/console-lockouts.spec.ts.
 */
let porta: TestPorta;
let german: ConsoleVisit;

beforeAll(async () => {
  porta = await startTestPorta();
  german = await consoleSignIn(porta, undefined, "/console", { "accept-language": "de" });
});
afterAll(async () => {
  await porta?.stop();
});

const prisma = () => porta.services.db.prisma;

describe("in German", () => {
  it("a locked user reads 'Gesperrt bis …' in the list and on their page; Entsperren lifts it", async () => {
    const org = await prisma().organization.create({ data: { slug: unique("gesperrt"), name: "Gesperrt GmbH" } });
    const locked = await createUser(prisma(), org.id, { email: "gesperrt@example.de" });
    await createUser(prisma(), org.id, { email: "frei@example.de" });
    await prisma().user.update({ where: { id: locked.id }, data: { lockedUntil: new Date(Date.now() + 15 * 60_000), failedLoginCount: 5 } });

    const list = await (await german.browser.get(`${porta.baseUrl}/console/organizations/${org.id}/users?locked=true`)).text();
    expect(list).toContain("Es werden nur Benutzer angezeigt, die gerade gesperrt sind.");
    expect(list).toMatch(/Gesperrt bis \d{2}\.\d{2}\.\d{4}, \d{2}:\d{2} UTC/);
    expect(list).toContain("gesperrt@example.de");
    expect(list).not.toContain("frei@example.de");

    const url = `${porta.baseUrl}/console/organizations/${org.id}/users/${locked.id}`;
    const { csrf, html } = await pageWithCsrf(german.browser, url);
    expect(html).toMatch(/Gesperrt bis \d{2}\.\d{2}\.\d{4}, \d{2}:\d{2} UTC/);
    expect(html).toContain(">Entsperren</button>");
    const unlocked = await german.browser.post(url, { csrf, intent: "unlock" });
    expect(unlocked.headers.get("location")).toBe(`/console/organizations/${org.id}/users/${locked.id}?done=unlock`);
    const after = await (await german.browser.get(`${porta.baseUrl}${unlocked.headers.get("location")!}`)).text();
    expect(after).toContain("Die Sperre wurde aufgehoben: Der Benutzer kann sich wieder anmelden.");
    expect(after).toContain("nicht gesperrt");
    expect((await prisma().user.findUniqueOrThrow({ where: { id: locked.id } })).lockedUntil).toBeNull();
    expect(await prisma().auditEntry.count({ where: { eventType: "user.unlocked", targetId: locked.id, actorType: "admin" } })).toBe(1);
  });

  it("lists pending invitations and says beside the field that an address already has one", async () => {
    const org = await prisma().organization.create({ data: { slug: unique("einladung"), name: "Einladung GmbH" } });
    const url = `${porta.baseUrl}/console/organizations/${org.id}/users`;
    const { csrf, html } = await pageWithCsrf(german.browser, url);
    expect(html).toContain("Keine Einladung wartet auf Antwort.");

    expect((await german.browser.post(url, { csrf, intent: "invite", email: "neu@example.de" })).status).toBe(200);
    const listed = await (await german.browser.get(url)).text();
    expect(listed).toContain("Offene Einladungen");
    expect(listed).toContain("neu@example.de");

    const again = await german.browser.post(url, { csrf, intent: "invite", email: "Neu@Example.de" });
    expect(again.status).toBe(409);
    expect(await again.text()).toMatch(
      /id="email-error" class="field-error" role="alert">An diese Adresse ist bereits eine Einladung unterwegs\. Senden Sie sie erneut oder ziehen Sie sie in der Liste der offenen Einladungen zurück\.</,
    );
    expect(await prisma().invitation.count({ where: { organizationId: org.id } })).toBe(1);
  });
});
