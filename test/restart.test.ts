import { randomBytes } from "node:crypto";
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { createTestDatabase, usingPostgres, type TestDatabase } from "./support/database";
import { startTestPorta, type TestPorta } from "./support/porta";

/**
 * What `npm start` leaves in DATA_DIR must bring back the same service on the next start: the
 * same organizations, the same encryption key, and no second "first administrator".
 */

const scratch = mkdtempSync(path.join(tmpdir(), "porta-restart-"));
const running: TestPorta[] = [];
const databases: TestDatabase[] = [];

afterAll(async () => {
  for (const porta of running) await porta.stop().catch(() => undefined);
  for (const database of databases) await database.drop();
  rmSync(scratch, { recursive: true, force: true });
});

async function start(options: Parameters<typeof startTestPorta>[0]): Promise<TestPorta> {
  const porta = await startTestPorta(options);
  running.push(porta);
  return porta;
}
async function stop(porta: TestPorta) {
  await porta.stop();
  running.splice(running.indexOf(porta), 1);
}

async function healthOf(porta: TestPorta) {
  const res = await fetch(`${porta.url}/health`);
  return { status: res.status, body: (await res.json()) as { status: string } };
}

describe("restart on the embedded default", () => {
  it("keeps the database, the encryption key and the first administrator across a restart", async () => {
    const dataDir = path.join(scratch, "embedded");
    // The embedded default, even when this run has DATABASE_URL: an empty value means unset.
    // No ADMIN_BOOTSTRAP_PASSWORD either, as on a fresh `npm start`.
    const env = { DATABASE_URL: "", ADMIN_BOOTSTRAP_PASSWORD: "", ADMIN_BOOTSTRAP_EMAIL: "" };

    const first = await start({ dataDir, persistentPglite: true, env });
    expect(first.services.db.kind).toBe("pglite");
    expect((await healthOf(first)).status).toBe(200);
    const created = first.bootstrap.createdAdmin;
    expect(created?.email).toBe("admin@localhost");
    expect(created?.generatedPassword).toBeTruthy();
    const organizationId = first.bootstrap.organizationId;
    const keyFile = path.join(dataDir, "encryption.key");
    const keyText = readFileSync(keyFile, "utf8");
    expect(Buffer.from(keyText.trim(), "base64")).toHaveLength(32);
    const sealed = first.services.encrypter.encrypt("totp-secret", "user:1:totp");
    await first.services.db.prisma.organization.create({ data: { name: "Kept", slug: "kept-across-restart" } });
    await stop(first);
    expect(existsSync(path.join(dataDir, "pglite"))).toBe(true);

    const second = await start({ dataDir, persistentPglite: true, env });
    expect(second.services.db.kind).toBe("pglite");
    expect((await healthOf(second)).status).toBe(200);
    expect(second.bootstrap.organizationId).toBe(organizationId);
    expect(second.bootstrap.createdAdmin).toBeUndefined();
    expect(await second.services.db.prisma.organization.count({ where: { slug: "kept-across-restart" } })).toBe(1);
    expect(await second.services.db.prisma.user.count({ where: { email: "admin@localhost" } })).toBe(1);

    expect(readFileSync(keyFile, "utf8")).toBe(keyText);
    expect(statSync(keyFile).mode & 0o777).toBe(0o600);
    // The same key, really: what the first run sealed, the second opens.
    expect(second.services.encrypter.decrypt(sealed, "user:1:totp")).toBe("totp-secret");
    await stop(second);
    // Two starts with initdb on disk take about 15 s on two cores; allow for a busy machine.
  }, 120_000);
});

describe(`restart on the configured database (${usingPostgres() ? "PostgreSQL" : "embedded"}) with ENCRYPTION_KEY set`, () => {
  it("uses ENCRYPTION_KEY, writes no key file, and finds the same organization again", async () => {
    const dataDir = path.join(scratch, "configured");
    const key = randomBytes(32).toString("base64");
    const database = await createTestDatabase();
    databases.push(database);
    const options = {
      dataDir,
      persistentPglite: true,
      env: { ENCRYPTION_KEY: key },
      ...(database.url ? { databaseUrl: database.url } : {}),
    };

    const first = await start(options);
    expect(first.services.db.kind).toBe(usingPostgres() ? "postgres" : "pglite");
    expect(first.bootstrap.createdAdmin).toBeDefined();
    const sealed = first.services.encrypter.encrypt("private-jwk", "signing-key:k1");
    await stop(first);

    const second = await start(options);
    expect(second.bootstrap.organizationId).toBe(first.bootstrap.organizationId);
    expect(second.bootstrap.createdAdmin).toBeUndefined();
    expect(second.services.encrypter.decrypt(sealed, "signing-key:k1")).toBe("private-jwk");
    expect(existsSync(path.join(dataDir, "encryption.key"))).toBe(false);
    await stop(second);
  }, 120_000);
});
