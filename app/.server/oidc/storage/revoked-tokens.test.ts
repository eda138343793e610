import { afterAll, afterEach, beforeAll, expect, it } from "vitest";
import { openMigratedDatabase, type MigratedDatabase } from "../../../../test/support/migrated-database";
import { createPostgresStore } from "../../cache/postgres-store";
import type { KeyValueStore } from "../../cache/store";
import type { Database } from "../../db/client";
import { testLogger } from "../../../../test/support/logs";
import { createRevokedTokens, type RevokedTokens } from "./revoked-tokens";

/**
 * Against the test run's own database (PostgreSQL with DATABASE_URL, the embedded PGlite
 * without). Each `process` is a mirror of its own over the one database, as separate Porta
 * processes are; its notifications can be made to go unheard, as a stalled connection's do.
 */
let database: MigratedDatabase;
let store: KeyValueStore;
const opened: RevokedTokens[] = [];
const inAnHour = () => Math.floor(Date.now() / 1000) + 3600;
let nextId = 0;
const tokenId = () => `token-${process.pid}-${nextId++}`;

beforeAll(async () => {
  database = await openMigratedDatabase();
  store = createPostgresStore(database.db, testLogger().logger);
});
afterEach(async () => {
  await Promise.all(opened.splice(0).map((mirror) => mirror.close()));
});
afterAll(async () => {
  await store.close();
  await database.dispose();
});

interface Process {
  revoked: RevokedTokens;
  /** Reads of a marker from the store. */
  reads(): number;
  /** While true, no notification reaches this process (its listening connection has stalled). */
  deaf: boolean;
  /** What the listening connection says after it was lost and found again. */
  reconnect(): void;
  clock: { skewMs: number };
}

function startProcess(options: { maxMirrored?: number } = {}): Process {
  let reads = 0;
  const handlers: Array<(message: string) => void> = [];
  const proc: Process = {
    revoked: undefined as unknown as RevokedTokens,
    reads: () => reads,
    deaf: false,
    reconnect: () => handlers.forEach((handler) => handler("*")),
    clock: { skewMs: 0 },
  };
  const notifications: Pick<Database, "notify" | "listen"> = {
    notify: (channel, message) => database.db.notify(channel, message),
    listen: async (channel, handler) => {
      handlers.push(handler);
      return database.db.listen(channel, (message) => {
        if (!proc.deaf) handler(message);
      });
    },
  };
  const counting: KeyValueStore = {
    ...store,
    get: async (key) => {
      reads += 1;
      return store.get(key);
    },
  };
  proc.revoked = createRevokedTokens(notifications, counting, { now: () => Date.now() + proc.clock.skewMs, elapsed: () => performance.now() + proc.clock.skewMs, ...options });
  opened.push(proc.revoked);
  return proc;
}

/** Checks until the mirror answers without reading the store (it loads on first use). */
async function warm(proc: Process, organizationId = "org-w") {
  for (let i = 0; i < 200; i++) {
    const before = proc.reads();
    await proc.revoked.isRevoked(organizationId, "never-revoked");
    if (proc.reads() === before) return;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  throw new Error("the mirror never became complete");
}

/** Once the mirror is warm, says "revoked" for the token without reading the store. */
async function expectRevokedFromMemory(proc: Process, jti: string) {
  await warm(proc);
  const reads = proc.reads();
  expect(await proc.revoked.isRevoked("org-a", jti)).toBe(true);
  expect(proc.reads()).toBe(reads);
}

it("answers from memory once loaded: a token nobody revoked costs no read, and a revocation in this process counts at once", async () => {
  const one = startProcess();
  const jti = tokenId();
  // Cold, the store answers.
  expect(await one.revoked.isRevoked("org-a", jti)).toBe(false);
  expect(one.reads()).toBe(1);
  await warm(one);
  const reads = one.reads();
  for (let i = 0; i < 50; i++) expect(await one.revoked.isRevoked("org-a", jti)).toBe(false);
  await one.revoked.revoke("org-a", jti, inAnHour());
  expect(await one.revoked.isRevoked("org-a", jti)).toBe(true);
  // The marker is the token's, in its organization only.
  expect(await one.revoked.isRevoked("org-b", jti)).toBe(false);
  expect(one.reads()).toBe(reads);
});

it("learns of another process's revocation from its notification, without reading the store", async () => {
  const one = startProcess();
  const two = startProcess();
  await warm(one);
  await warm(two);
  const reads = two.reads();
  const jti = tokenId();
  await one.revoked.revoke("org-a", jti, inAnHour());
  let seen = false;
  for (let i = 0; i < 100 && !seen; i++) {
    seen = await two.revoked.isRevoked("org-a", jti);
    if (!seen) await new Promise((resolve) => setTimeout(resolve, 5));
  }
  expect(seen).toBe(true);
  expect(two.reads()).toBe(reads);
});

it("knows the markers written before it started", async () => {
  const one = startProcess();
  const jti = tokenId();
  await one.revoked.revoke("org-a", jti, inAnHour());
  const later = startProcess();
  expect(await later.revoked.isRevoked("org-a", jti)).toBe(true);
  await expectRevokedFromMemory(later, jti);
});

it("never lets a revoked token pass for longer than the freshness bound when its notifications stop arriving", async () => {
  const one = startProcess();
  const stalled = startProcess();
  await warm(stalled);
  stalled.deaf = true;
  const jti = tokenId();
  await one.revoked.revoke("org-a", jti, inAnHour());
  // Its last heartbeat came back under 2 s ago: within that bound it may not know yet.
  stalled.clock.skewMs = 2_100;
  expect(await stalled.revoked.isRevoked("org-a", jti)).toBe(true);
  expect(await stalled.revoked.isRevoked("org-a", tokenId())).toBe(false);
  // Both answers came from the store: no heartbeat comes back, so memory is not trusted.
  const reads = stalled.reads();
  await stalled.revoked.isRevoked("org-a", tokenId());
  expect(stalled.reads()).toBe(reads + 1);
});

it("reloads after its listening connection was lost, so that a marker it missed still counts", async () => {
  const one = startProcess();
  const two = startProcess();
  await warm(two);
  two.deaf = true;
  const jti = tokenId();
  await one.revoked.revoke("org-a", jti, inAnHour());
  two.deaf = false;
  two.reconnect();
  expect(await two.revoked.isRevoked("org-a", jti)).toBe(true);
  await expectRevokedFromMemory(two, jti);
});

it("keeps nothing for a token that has already expired", async () => {
  const one = startProcess();
  const jti = tokenId();
  await one.revoked.revoke("org-a", jti, Math.floor(Date.now() / 1000) - 1);
  expect(await store.liveKeysLike(`%:${jti}`, 10)).toEqual([]);
});

it("steps aside, reading the store at every check, when there are more markers than it may hold", async () => {
  const writer = startProcess();
  const organizationId = `org-many-${process.pid}-${nextId++}`;
  const total = (await store.liveKeysLike("oidc:%:ClientCredentials:revoked:%", 10_000)).length;
  for (let i = 0; i < 3; i++) await writer.revoked.revoke(organizationId, tokenId(), inAnHour());
  const small = startProcess({ maxMirrored: total + 2 });
  for (let i = 0; i < 20; i++) await small.revoked.isRevoked(organizationId, "never-revoked");
  await new Promise((resolve) => setTimeout(resolve, 100));
  const reads = small.reads();
  for (let i = 0; i < 5; i++) expect(await small.revoked.isRevoked(organizationId, "never-revoked")).toBe(false);
  expect(small.reads()).toBe(reads + 5);
});
