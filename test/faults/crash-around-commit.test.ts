import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import pg from "pg";
import { afterAll, describe, expect, it } from "vitest";
import { signInAsAdmin } from "../support/admin-api";
import { freePort, spawnServer, startPrivatePostgres, waitForHealth, type PostgresServer, type ServerProcess } from "../support/process";

/**
 * A write and its audit entries commit together, whatever moment the process dies at: Porta is
 * SIGKILLed while bulk runs and single writes are in flight, at a different moment each round,
 * and after each restart every user in the database has its `user.created` entry and no entry
 * names a user that was never committed. The database is a private PostgreSQL (a real crash
 * of the process, not of the database); the process is Porta's own `server.ts`.
 */
const ADMIN = { email: "crash-admin@porta.test", password: "correct horse battery staple 42" };
const ROUNDS = 4;

describe("SIGKILL around the commit", () => {
  const dataDir = mkdtempSync(path.join(tmpdir(), "porta-crash-"));
  const encryptionKey = randomBytes(32).toString("base64");
  let postgres: PostgresServer | undefined;
  let server: ServerProcess | undefined;

  afterAll(async () => {
    server?.kill("SIGKILL");
    await postgres?.dispose();
    rmSync(dataDir, { recursive: true, force: true });
  }, 60_000);

  async function start(port: number, pgUrl: string) {
    server = spawnServer({
      NODE_ENV: "production",
      PORT: String(port),
      DATA_DIR: dataDir,
      DATABASE_URL: pgUrl,
      ENCRYPTION_KEY: encryptionKey,
      ADMIN_BOOTSTRAP_EMAIL: ADMIN.email,
      ADMIN_BOOTSTRAP_PASSWORD: ADMIN.password,
      LOG_LEVEL: "warn",
    });
    const ready = await waitForHealth(`http://127.0.0.1:${port}`, server, 120_000);
    expect(ready.status).toBe(200);
  }

  it("leaves every committed user with its audit entry and no entry without its user", { timeout: 600_000 }, async () => {
    postgres = await startPrivatePostgres();
    const port = await freePort();
    const base = `http://localhost:${port}`;
    await start(port, postgres.url);
    const { accessToken } = await signInAsAdmin(`${base}/porta-admin`, ADMIN);
    const call = (method: string, route: string, body: unknown) =>
      fetch(`${base}/api/admin${route}`, {
        method,
        headers: { authorization: `Bearer ${accessToken}`, "content-type": "application/json" },
        body: JSON.stringify(body),
      });
    const created = await call("POST", "/organizations", { name: "Crash Org", slug: "crash-org" });
    expect(created.status).toBe(201);
    const organizationId = ((await created.json()) as { id: string }).id;

    const committed: number[] = [];
    const sql = new pg.Client({ connectionString: postgres.url });
    await sql.connect();
    try {
      for (let round = 0; round < ROUNDS; round++) {
        const inFlight: Array<Promise<unknown>> = [];
        for (const mode of ["all_or_nothing", "best_effort"]) {
          const operations = Array.from({ length: 100 }, (_, i) => ({ op: "create", email: `r${round}-${mode}-${i}@crash.test`, givenName: "Crash" }));
          inFlight.push(call("POST", "/bulk", { organizationId, mode, operations }).catch(() => undefined));
        }
        for (let i = 0; i < 10; i++) {
          inFlight.push(call("POST", `/organizations/${organizationId}/users`, { email: `r${round}-single-${i}@crash.test` }).catch(() => undefined));
        }
        // Killed as the first of these writes commits, a little later each round: some commits
        // are done, others in flight.
        const before = committed.at(-1) ?? 0;
        for (const deadline = Date.now() + 60_000; Date.now() < deadline; await new Promise((resolve) => setTimeout(resolve, 2))) {
          const { rows: now } = await sql.query<{ n: string }>(`SELECT count(*) AS n FROM "User" WHERE "organizationId" = $1`, [organizationId]);
          if (Number(now[0]!.n) > before) break;
        }
        await new Promise((resolve) => setTimeout(resolve, [0, 15, 40, 90][round % 4]));
        server!.kill("SIGKILL");
        await server!.exited;
        await Promise.all(inFlight);

        const { rows } = await sql.query<{ users_without_entry: string; entries_without_user: string; users: string }>(
          `SELECT
             (SELECT count(*) FROM "User" u WHERE u."organizationId" = $1
                AND NOT EXISTS (SELECT 1 FROM "AuditEntry" a WHERE a."eventType" = 'user.created' AND a."targetId" = u.id::text)) AS users_without_entry,
             (SELECT count(*) FROM "AuditEntry" a WHERE a."eventType" = 'user.created' AND a."organizationId" = $1
                AND NOT EXISTS (SELECT 1 FROM "User" u WHERE u.id::text = a."targetId")) AS entries_without_user,
             (SELECT count(*) FROM "User" u WHERE u."organizationId" = $1) AS users`,
          [organizationId],
        );
        expect({ round, usersWithoutEntry: Number(rows[0]!.users_without_entry), entriesWithoutUser: Number(rows[0]!.entries_without_user) }).toEqual({
          round,
          usersWithoutEntry: 0,
          entriesWithoutUser: 0,
        });
        // All-or-nothing runs commit whole or not at all.
        const { rows: partial } = await sql.query<{ n: string }>(
          `SELECT count(*) AS n FROM "User" WHERE "organizationId" = $1 AND email LIKE $2`,
          [organizationId, `r${round}-all_or_nothing-%`],
        );
        expect([0, 100]).toContain(Number(partial[0]!.n));

        committed.push(Number(rows[0]!.users));
        await start(port, postgres.url);
      }
      // The kills did land among the writes: some committed, and not everything that was sent.
      expect(committed.at(-1)).toBeGreaterThan(0);
      expect(committed.at(-1)).toBeLessThan(ROUNDS * 210);
    } finally {
      await sql.end();
    }
  });
});
