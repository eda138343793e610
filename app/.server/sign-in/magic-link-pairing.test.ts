import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openMigratedDatabase, type MigratedDatabase } from "../../../test/support/migrated-database";
import { createPostgresStore } from "../cache/postgres-store";
import type { KeyValueStore } from "../cache/store";
import { testLogger } from "../../../test/support/logs";
import { checkPairing, pairingCode, startPairing } from "./magic-link-pairing";

const { logger: quietLogger } = testLogger();

/** Decision 033: three numbers per pairing, however many arrive at once. */
describe("magic-link pairing attempts", () => {
  let database: MigratedDatabase;
  let store: KeyValueStore;

  beforeAll(async () => {
    database = await openMigratedDatabase();
    store = createPostgresStore(database.db, quietLogger);
  });
  afterAll(async () => {
    await store.close();
    await database.dispose();
  });

  const wrongFor = (code: string) => (code === "10" ? "11" : "10");

  it("counts wrong numbers sent at the same moment one by one: two are wrong, the rest end the pairing", async () => {
    const code = await startPairing(store, "uid-concurrent", 600);
    const results = await Promise.all(Array.from({ length: 10 }, () => checkPairing(store, "uid-concurrent", wrongFor(code))));
    expect(results.filter((r) => r === "wrong")).toHaveLength(2);
    expect(results.filter((r) => r === "exhausted")).toHaveLength(8);
    // The right number comes too late: the pairing is over, and says why.
    expect(await checkPairing(store, "uid-concurrent", code)).toBe("exhausted");
    expect(await pairingCode(store, "uid-concurrent")).toBeNull();
  });

  it("compares at most three numbers when every possible number is sent at once", async () => {
    const code = await startPairing(store, "uid-all-numbers", 600);
    const guesses = Array.from({ length: 90 }, (_, i) => String(10 + i));
    const results = await Promise.all(guesses.map((guess) => checkPairing(store, "uid-all-numbers", guess)));
    expect(results.filter((r) => r === "match" || r === "wrong").length).toBeLessThanOrEqual(3);
    expect(results.filter((r) => r === "match").length).toBeLessThanOrEqual(1);
    expect(results.filter((r) => r === "exhausted").length).toBeGreaterThanOrEqual(87);
    expect(code).toMatch(/^\d{2}$/);
  });

  it("lets the right number through after two wrong ones, once", async () => {
    const code = await startPairing(store, "uid-sequential", 600);
    expect(await checkPairing(store, "uid-sequential", wrongFor(code))).toBe("wrong");
    expect(await checkPairing(store, "uid-sequential", wrongFor(code))).toBe("wrong");
    const both = await Promise.all([checkPairing(store, "uid-sequential", code), checkPairing(store, "uid-sequential", code)]);
    expect(both.filter((r) => r === "match")).toHaveLength(1);
  });

  it("starts counting afresh for a new pairing after the last one ended", async () => {
    const first = await startPairing(store, "uid-again", 600);
    for (let i = 0; i < 3; i++) await checkPairing(store, "uid-again", wrongFor(first));
    const second = await startPairing(store, "uid-again", 600);
    expect(await checkPairing(store, "uid-again", wrongFor(second))).toBe("wrong");
    expect(await checkPairing(store, "uid-again", second)).toBe("match");
  });

  it("keeps the number and the count when the same sign-in asks again", async () => {
    const code = await startPairing(store, "uid-resend", 600);
    expect(await checkPairing(store, "uid-resend", wrongFor(code))).toBe("wrong");
    expect(await startPairing(store, "uid-resend", 600)).toBe(code);
    expect(await checkPairing(store, "uid-resend", wrongFor(code))).toBe("wrong");
    expect(await checkPairing(store, "uid-resend", wrongFor(code))).toBe("exhausted");
  });
});
