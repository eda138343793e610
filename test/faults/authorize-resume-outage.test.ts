import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { accountSessionsKey } from "~/.server/oidc/storage/sessions";
import { createUser } from "../support/factories";
import { startTestPorta, type TestPorta } from "../support/porta";
import { startPrivatePostgres, type PostgresServer } from "../support/process";
import { createTenant, openLoginPage, PASSWORD, submitPassword } from "../login/helpers";

/**
 * PostgreSQL goes away in the middle of the authorization's resume step (the browser coming
 * back from the sign-in pages to /{slug}/auth/authorize/{uid}): the answer is a 503 with
 * Retry-After, as at every other door, and what the log says was answered is what was sent.
 * The step is caught at a chosen point for real: another connection holds the lock on the
 * account's set of sessions, so the step waits when it saves the browser's session (after it
 * has answered with a redirect), and the private server is stopped then. The shared database
 * is never touched.
 */
describe("PostgreSQL stopping during the authorize resume step", () => {
  let server: PostgresServer;
  let porta: TestPorta;
  let locker: pg.Client | undefined;

  beforeAll(async () => {
    server = await startPrivatePostgres();
    porta = await startTestPorta({ databaseUrl: server.url, env: { REDIS_URL: undefined } });
  }, 180_000);

  afterAll(async () => {
    await locker?.end().catch(() => undefined);
    await server?.start().catch(() => undefined);
    await porta?.stop();
    await server?.dispose();
  }, 60_000);

  it("answers 503 with Retry-After, and the access log and the warning name the status sent", { timeout: 120_000 }, async () => {
    const tenant = await createTenant(porta, { name: "Acme Outage", client: { skipConsent: true } });
    const email = `resume-${Date.now()}@example.com`;
    const user = await createUser(porta.services.db.prisma, tenant.org.id, { email, password: PASSWORD });
    const page = await openLoginPage(tenant);
    const signedIn = await submitPassword(page, email, PASSWORD);
    expect([302, 303]).toContain(signedIn.status);
    const resume = new URL(signedIn.headers.get("location")!, page.interactionUrl);
    expect(resume.pathname).toBe(`/${tenant.org.slug}/auth/authorize/${page.uid}`);

    // The lock the session store takes on an account's set of sessions (cache/postgres-store.ts addToSet).
    locker = new pg.Client({ connectionString: server.url });
    locker.on("error", () => undefined);
    await locker.connect();
    await locker.query("BEGIN");
    await locker.query(`SELECT pg_advisory_xact_lock(hashtextextended('porta_set:' || $1::text, 0))`, [accountSessionsKey(tenant.org.id, user.id)]);

    const answered = page.browser.get(resume.href);
    const waitingOnTheLock = async () => {
      // pg_stat_activity is read once per transaction unless its snapshot is dropped.
      await locker!.query("SELECT pg_stat_clear_snapshot()");
      const rows = await locker!.query<{ n: number }>(`SELECT count(*)::int AS n FROM pg_stat_activity WHERE wait_event = 'advisory' AND query LIKE '%porta_set:%'`);
      return rows.rows[0]!.n > 0;
    };
    for (const deadline = Date.now() + 20_000; !(await waitingOnTheLock()); await new Promise((resolve) => setTimeout(resolve, 50))) {
      expect(Date.now(), "the resume step never reached the session's save").toBeLessThan(deadline);
    }
    await server.kill();
    const res = await answered;
    const body = await res.text();

    expect(res.status, body.slice(0, 300)).toBe(503);
    expect(res.headers.get("retry-after")).toBe("5");
    expect(res.headers.get("location")).toBeNull();
    // The organization's own error page, as the provider rendered it before the database went.
    expect(res.headers.get("content-type")).toMatch(/^text\/html/);
    expect(body).toContain("Acme Outage");
    const access = porta.logs.lines.filter((line) => line.msg === "request" && line.path === resume.pathname);
    expect(access.map((line) => line.status)).toEqual([res.status]);
    const told = porta.logs.lines.filter((line) => String(line.msg).startsWith("database unavailable: a protocol request answered"));
    expect(told.map((line) => line.msg)).toEqual([`database unavailable: a protocol request answered ${res.status}`]);
    expect(porta.logs.lines.filter((line) => (line.level as number) >= 50).map((line) => line.msg)).toEqual([]);
  });
});
