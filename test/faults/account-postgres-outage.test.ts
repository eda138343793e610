import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createAccountTenant, createAccountUser, openAccount, postAccount, shown, signInToAccount } from "../account/helpers";
import { startTestPorta, type TestPorta } from "../support/porta";
import { startPrivatePostgres, type PostgresServer } from "../support/process";
import { startSmtpSink, type SmtpSink } from "../support/smtp-sink";

/**
 * The account page under a fault: PostgreSQL stops while a person uses the account page. Every page
 * and form answers the branded "try again shortly" (503, Retry-After), never a 500 or a sign-in
 * loop; nothing is half-written; and once the database is back the same browser session carries
 * on where it was, the change it retries saved and audited once. The database is a private
 * server this test stops and starts; the shared one is never touched.
 */
describe("account page with PostgreSQL down", () => {
  let pg: PostgresServer;
  let porta: TestPorta;
  let sink: SmtpSink;

  beforeAll(async () => {
    pg = await startPrivatePostgres();
    sink = await startSmtpSink();
    porta = await startTestPorta({ databaseUrl: pg.url, env: { REDIS_URL: undefined, SMTP_HOST: sink.host, SMTP_PORT: String(sink.port), SMTP_FROM: "Porta <no-reply@porta.test>" } });
  }, 180_000);

  afterAll(async () => {
    await pg?.start().catch(() => undefined);
    await porta?.stop();
    await sink?.close();
    await pg?.dispose();
  }, 60_000);

  it("answers 503 with Retry-After to every page and form, writes nothing, and carries on in the same session afterwards", { timeout: 180_000 }, async () => {
    const tenant = await createAccountTenant(porta);
    const user = await createAccountUser(porta, tenant);
    const page = await signInToAccount(tenant, user.email);
    const { prisma } = porta.services.db;

    await pg.kill();
    try {
      const answers = {
        page: () => page.browser.get(tenant.accountUrl),
        twoFactorPage: () => page.browser.get(`${tenant.accountUrl}/two-factor`),
        profile: () => postAccount(tenant, page, { intent: "profile", givenName: "Grace", familyName: "Hopper", locale: "" }),
        email: () => postAccount(tenant, page, { intent: "email", newEmail: "grace@example.org" }),
        endOthers: () => postAccount(tenant, page, { intent: "end-other-sessions" }),
      };
      for (const [name, call] of Object.entries(answers)) {
        const res = await call();
        expect(res.status, name).toBe(503);
        expect(res.headers.get("retry-after"), name).toBe("5");
        expect(shown(await res.text()), name).toContain("Try again shortly");
      }
      const lines = porta.logs.lines.filter((line) => String(line.msg).startsWith("database unavailable"));
      expect(lines.length).toBeGreaterThanOrEqual(Object.keys(answers).length);
      expect(lines.every((line) => line.err === undefined && line.level !== 50)).toBe(true);
      expect(porta.logs.lines.filter((line) => Number(line.level) >= 50)).toEqual([]);
    } finally {
      await pg.start();
    }

    let status = 0;
    for (const deadline = Date.now() + 30_000; Date.now() < deadline; await new Promise((r) => setTimeout(r, 250))) {
      status = (await page.browser.get(tenant.accountUrl)).status;
      if (status === 200) break;
      expect(status).toBe(503);
    }
    expect(status).toBe(200);
    // Nothing of the refused forms was written.
    expect(await prisma.user.findUniqueOrThrow({ where: { id: user.id } })).toMatchObject({ givenName: "Ada", familyName: "Lovelace" });
    expect(await prisma.auditEntry.count({ where: { targetId: user.id, eventType: { in: ["account.profile_updated", "account.email_change_requested"] } } })).toBe(0);
    expect(await prisma.emailChangeToken.count({ where: { userId: user.id } })).toBe(0);

    // The same session, the same CSRF token: the retried change is saved once and audited.
    const again = await openAccount(tenant, page.browser);
    expect(again.csrf).toBe(page.csrf);
    const saved = await postAccount(tenant, page, { intent: "profile", givenName: "Grace", familyName: "Hopper", locale: "" });
    expect(saved.status).toBe(303);
    expect(await prisma.user.findUniqueOrThrow({ where: { id: user.id } })).toMatchObject({ givenName: "Grace", familyName: "Hopper" });
    expect(await prisma.auditEntry.count({ where: { targetId: user.id, eventType: "account.profile_updated" } })).toBe(1);
  });
});
