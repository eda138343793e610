import { cpSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { authorizationUrl as consoleAuthorizationUrl } from "~/.server/console/oidc-client";
import { createTestDatabase, usingPostgres, type TestDatabase } from "./support/database";
import { createClient } from "./support/factories";
import { authorizationUrl } from "./support/oidc";
import { startTestPorta, type TestPorta } from "./support/porta";
import { startPrivateRedis, type RedisServer } from "./support/process";

/**
 * The shared cache belongs to the database it caches (decision 070). Two deployments on two
 * databases that share one Redis database, a database dropped and made again, and a database
 * restored from a backup while Redis kept the entries written after the backup: none of them may
 * read an entry the others wrote.
 */

const REDIS_PREFIX = "porta-shared:";

/** Where one deployment keeps its database, so that a test can drop it, back it up and restore it. */
interface Deployment {
  start(): Promise<TestPorta>;
  /** Drops the database and makes an empty one in its place (Porta stopped). */
  recreate(): Promise<void>;
  backUp(): Promise<void>;
  /** Puts the backup in the database's place (Porta stopped). */
  restore(): Promise<void>;
  dispose(): Promise<void>;
}

async function sql(text: string) {
  const client = new pg.Client({ connectionString: process.env.DATABASE_URL });
  await client.connect();
  try {
    await client.query(text);
  } finally {
    await client.end();
  }
}

function deployment(redis: RedisServer): Deployment {
  const scratch = mkdtempSync(path.join(tmpdir(), "porta-cache-db-"));
  const dataDir = path.join(scratch, "data");
  const backupDir = path.join(scratch, "backup");
  let database: TestDatabase | undefined;
  const name = () => new URL(database!.url!).pathname.slice(1);
  const env = { REDIS_URL: redis.url };
  return {
    async start() {
      if (usingPostgres()) {
        database ??= await createTestDatabase({ migrated: true });
        return startTestPorta({ env, dataDir, databaseUrl: database.url!, redisPrefix: REDIS_PREFIX });
      }
      return startTestPorta({ env, dataDir, persistentPglite: true, redisPrefix: REDIS_PREFIX });
    },
    async recreate() {
      if (usingPostgres()) {
        await sql(`DROP DATABASE ${name()} WITH (FORCE)`);
        await sql(`CREATE DATABASE ${name()} TEMPLATE ${process.env.PORTA_TEST_TEMPLATE_DATABASE}`);
      } else {
        rmSync(dataDir, { recursive: true, force: true });
      }
    },
    async backUp() {
      if (usingPostgres()) await sql(`CREATE DATABASE ${name()}_backup TEMPLATE ${name()}`);
      else cpSync(dataDir, backupDir, { recursive: true });
    },
    async restore() {
      if (usingPostgres()) {
        await sql(`DROP DATABASE ${name()} WITH (FORCE)`);
        await sql(`CREATE DATABASE ${name()} TEMPLATE ${name()}_backup`);
      } else {
        rmSync(dataDir, { recursive: true, force: true });
        cpSync(backupDir, dataDir, { recursive: true });
      }
    },
    async dispose() {
      if (usingPostgres() && database) {
        await sql(`DROP DATABASE IF EXISTS ${name()}_backup WITH (FORCE)`);
        await database.drop();
      }
      rmSync(scratch, { recursive: true, force: true });
    },
  };
}

/** The console's sign-in request, as the console sends it: the admin's sign-in page must open. */
async function consoleSignIn(porta: TestPorta) {
  const url = consoleAuthorizationUrl(porta.services, { state: "s".repeat(16), nonce: "n".repeat(16), challenge: "c".repeat(43), language: "en" });
  const response = await fetch(url, { redirect: "manual" });
  await response.body?.cancel();
  return { status: response.status, location: response.headers.get("location") ?? "" };
}

async function expectSignInOpens(porta: TestPorta) {
  const answer = await consoleSignIn(porta);
  expect(answer.status).toBe(303);
  expect(answer.location).toMatch(/\/interaction\//);
}

describe("a cache shared with another database", () => {
  let redis: RedisServer;
  const deployments: Deployment[] = [];
  const running: TestPorta[] = [];
  const start = async (where: Deployment) => {
    const porta = await where.start();
    running.push(porta);
    return porta;
  };
  const stop = async (porta: TestPorta) => {
    running.splice(running.indexOf(porta), 1);
    await porta.stop();
  };
  beforeAll(async () => {
    redis = await startPrivateRedis();
  });
  afterAll(async () => {
    for (const porta of running) await porta.stop();
    for (const where of deployments) await where.dispose();
    await redis?.stop();
  });
  const newDeployment = () => {
    const where = deployment(redis);
    deployments.push(where);
    return where;
  };

  it("keeps two databases that share one Redis database apart", async () => {
    const first = await start(newDeployment());
    const second = await start(newDeployment());
    expect(first.bootstrap.organizationId).not.toBe(second.bootstrap.organizationId);
    await expectSignInOpens(first);
    await expectSignInOpens(second);
    await expectSignInOpens(first);
    await stop(first);
    await stop(second);
  });

  it("does not answer from a database that was dropped and made again", async () => {
    const where = newDeployment();
    const before = await start(where);
    await expectSignInOpens(before);
    await stop(before);
    await where.recreate();
    const after = await start(where);
    expect(after.bootstrap.organizationId).not.toBe(before.bootstrap.organizationId);
    await expectSignInOpens(after);
    await stop(after);
  });

  it("does not answer with what was written after the backup a database was restored from", async () => {
    const where = newDeployment();
    const first = await start(where);
    await stop(first);
    await where.backUp();
    // After the backup: a client is registered and used, so Redis holds it.
    const porta = await start(where);
    const { client } = await createClient(porta.services.db.prisma, porta.bootstrap.organizationId, { confidential: false, id: "after-the-backup" });
    const request = authorizationUrl(porta, { slug: "porta-admin" }, client, { redirect_uri: "https://rp.example.com/cb", scope: "openid", code_challenge: "c".repeat(43), code_challenge_method: "S256" });
    const used = await fetch(request, { redirect: "manual" });
    await used.body?.cancel();
    expect(used.status).toBe(303);
    expect(used.headers.get("location")).toMatch(/\/interaction\//);
    await stop(porta);

    await where.restore();
    const restored = await start(where);
    const refused = await fetch(request.href.replace(porta.baseUrl, restored.baseUrl), { redirect: "manual" });
    // The backup has no such client: the provider's error page, not a sign-in.
    expect(refused.status).toBe(400);
    expect(await refused.text()).toContain("invalid_client");
    await expectSignInOpens(restored);
    await stop(restored);
  });
});
