import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import * as oidc from "openid-client";
import { afterAll, describe, expect, it } from "vitest";
import { obtainAdminTokens } from "./support/admin-api";
import { createTestDatabase, usingPostgres, type TestDatabase } from "./support/database";
import { createUser } from "./support/factories";
import { freePort, startTestPorta, type TestPorta, type TestPortaOptions } from "./support/porta";
import { createTenant, openLoginPage, PASSWORD, passwordLoginToCallback, redeem, type Tenant } from "./login/helpers";

/**
 * A restart of Porta signs nobody out and loses no sign-in in flight (decision 024): sessions,
 * interactions and the admin client's refresh tokens live in the database, not in process
 * memory or Redis. Before, the embedded default lost all of them at every restart, and a Redis
 * that came back empty lost them in the PostgreSQL mode.
 */
const scratch = mkdtempSync(path.join(tmpdir(), "porta-restart-sign-ins-"));
const running = new Set<TestPorta>();
const databases: TestDatabase[] = [];

afterAll(async () => {
  for (const porta of running) await porta.stop().catch(() => undefined);
  for (const database of databases) await database.drop();
  rmSync(scratch, { recursive: true, force: true });
});

async function start(options: TestPortaOptions): Promise<TestPorta> {
  const porta = await startTestPorta(options);
  running.add(porta);
  return porta;
}
async function stop(porta: TestPorta) {
  await porta.stop();
  running.delete(porta);
}

async function restartKeepsSignIns(options: TestPortaOptions) {
  const first = await start(options);
  const prisma = first.services.db.prisma;
  const tenant: Tenant = await createTenant(first);
  const signedIn = await createUser(prisma, tenant.org.id, { password: PASSWORD });
  const midway = await createUser(prisma, tenant.org.id, { password: PASSWORD });
  const admin = await obtainAdminTokens(first);

  // One person has signed in; another has the login page open.
  const done = await openLoginPage(tenant);
  await redeem(done, (await passwordLoginToCallback(done, signedIn.email, PASSWORD, tenant.redirectUri)).callback);
  const open = await openLoginPage(tenant);
  expect(open.res.status).toBe(200);

  await stop(first);
  const second = await start(options);

  // The session: a silent authorization request still gets a code.
  const silent = new URL(`${tenant.issuer}/auth/authorize`);
  for (const [key, value] of Object.entries({ client_id: tenant.client.id, response_type: "code", redirect_uri: tenant.redirectUri, scope: "openid", prompt: "none" })) {
    silent.searchParams.set(key, value);
  }
  const { url } = await done.browser.follow(await done.browser.get(silent.href), silent.href, (u) => u.startsWith(tenant.redirectUri));
  expect(new URL(url).searchParams.get("error")).toBeNull();
  expect(new URL(url).searchParams.get("code")).toBeTruthy();

  // The sign-in in flight: the page opened before the restart still signs in.
  const { callback } = await passwordLoginToCallback(open, midway.email, PASSWORD, tenant.redirectUri);
  expect((await redeem(open, callback)).claims()?.sub).toBe(midway.id);

  // The admin's refresh token (CLI, console).
  const refreshed = await oidc.refreshTokenGrant(admin.config, admin.refreshToken!);
  expect(refreshed.access_token).toBeTruthy();
  await stop(second);
}

async function fixedAddress() {
  const port = await freePort();
  return { PORT: String(port), BASE_URL: `http://localhost:${port}` };
}

describe("a restart of Porta", () => {
  it("on the embedded default signs nobody out and keeps the sign-in in flight", async () => {
    const env = { ...(await fixedAddress()), DATABASE_URL: "", REDIS_URL: "" };
    await restartKeepsSignIns({ dataDir: path.join(scratch, "embedded"), persistentPglite: true, env });
  }, 180_000);

  it.runIf(usingPostgres())("on PostgreSQL, with Redis empty after the restart, signs nobody out and keeps the sign-in in flight", async () => {
    const database = await createTestDatabase();
    databases.push(database);
    const env = { ...(await fixedAddress()), ENCRYPTION_KEY: randomBytes(32).toString("base64") };
    // Each start has its own Redis key prefix: to the second, Redis is empty.
    await restartKeepsSignIns({ dataDir: path.join(scratch, "postgres"), databaseUrl: database.url!, env });
  }, 180_000);
});
