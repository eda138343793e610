import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openMigratedDatabase, type MigratedDatabase } from "../../../test/support/migrated-database";
import { createRateLimits, refundEach, type LimitRule, type RateLimits } from "./limiters";

// Against the test run's own database: PostgreSQL with DATABASE_URL, the embedded PGlite without.
describe("rate-limit counters", () => {
  let database: MigratedDatabase;
  let limits: RateLimits;
  const rule: LimitRule = { points: 3, durationSeconds: 60 };
  /** Ends the key's current window, as the passing of its duration would. */
  const endWindow = (key: string) =>
    database.db.executeSql(`UPDATE "RateLimiterFlexible" SET "expire" = now() - interval '1 second' WHERE "key" = $1::text`, [`rl:magicLink:${key}`]);
  const stored = async (key: string) =>
    database.db.prisma.rateLimiterFlexible.findUnique({ where: { key: `rl:magicLink:${key}` } });

  beforeAll(async () => {
    database = await openMigratedDatabase();
    limits = createRateLimits(database.db, async () => rule);
  });
  afterAll(async () => {
    await database.dispose();
  });

  it("counts an attempt in one statement, and refuses once the window's points are used", async () => {
    const sql: string[] = [];
    const stop = database.db.onQuery((statement) => sql.push(statement));
    try {
      expect(await limits.consume("magicLink", "one")).toEqual({ allowed: true });
    } finally {
      stop();
    }
    expect(sql, sql.join("\n")).toHaveLength(1);
    expect(await limits.consume("magicLink", "one")).toEqual({ allowed: true });
    expect(await limits.consume("magicLink", "one")).toEqual({ allowed: true });
    const refused = await limits.consume("magicLink", "one");
    expect(refused.allowed).toBe(false);
    expect(!refused.allowed && refused.retryAfterSeconds).toBeGreaterThan(55);
    expect(!refused.allowed && refused.retryAfterSeconds).toBeLessThanOrEqual(60);
    expect((await limits.check("magicLink", "one")).allowed).toBe(false);
    // Another key has its own count.
    expect(await limits.consume("magicLink", "two")).toEqual({ allowed: true });
  });

  it("reads the highest count of several counters in one statement and no write, ignoring ended windows", async () => {
    for (let i = 0; i < 2; i++) await limits.consume("magicLink", "highest-a");
    for (let i = 0; i < 3; i++) await limits.consume("magicLink", "highest-b");
    await endWindow("highest-b");
    const sql: string[] = [];
    const stop = database.db.onQuery((statement) => sql.push(statement));
    let highest: number;
    try {
      highest = await limits.highestCount([
        ["magicLink", "highest-a"],
        ["magicLink", "highest-b"],
        ["magicLink", "highest-none"],
      ]);
    } finally {
      stop();
    }
    expect(highest).toBe(2);
    expect(sql, sql.join("\n")).toHaveLength(1);
    expect(sql[0]).toMatch(/^SELECT/);
    expect(await limits.highestCount([["magicLink", "highest-none"]])).toBe(0);
    expect(await limits.highestCount([])).toBe(0);
  });

  it("starts a new window once the last one has ended, instead of adding to it", async () => {
    for (let i = 0; i < 4; i++) await limits.consume("magicLink", "ended");
    expect((await stored("ended"))?.points).toBe(4);
    await endWindow("ended");
    expect(await limits.consume("magicLink", "ended")).toEqual({ allowed: true });
    const row = await stored("ended");
    expect(row?.points).toBe(1);
    expect(row!.expire!.getTime()).toBeGreaterThan(Date.now() + 55_000);
  });

  it("counts every one of many attempts made at once", async () => {
    const outcomes = await Promise.all(Array.from({ length: 12 }, () => limits.consume("magicLink", "burst")));
    expect(outcomes.filter((o) => o.allowed)).toHaveLength(rule.points);
    expect((await stored("burst"))?.points).toBe(12);
  });

  it("gives a point back to the current window, and resets a key", async () => {
    for (let i = 0; i < 3; i++) await limits.consume("magicLink", "refund");
    expect((await limits.check("magicLink", "refund")).allowed).toBe(false);
    await limits.refund("magicLink", "refund");
    expect((await stored("refund"))?.points).toBe(2);
    expect((await limits.consume("magicLink", "refund")).allowed).toBe(true);
    await limits.reset("magicLink", "refund");
    expect(await stored("refund")).toBeNull();
    expect((await limits.check("magicLink", "refund")).allowed).toBe(true);
  });

  it("gives the points of several counters back in one statement, and none to a window that has ended", async () => {
    for (let i = 0; i < 3; i++) await limits.consume("magicLink", "both-a");
    await limits.consume("magicLink", "both-b");
    for (let i = 0; i < 2; i++) await limits.consume("magicLink", "both-ended");
    await endWindow("both-ended");
    const sql: string[] = [];
    const stop = database.db.onQuery((statement) => sql.push(statement));
    try {
      await refundEach(limits, [
        ["magicLink", "both-a"],
        ["magicLink", null],
        ["magicLink", "both-b"],
        ["magicLink", "both-ended"],
        ["magicLink", "never-counted"],
      ]);
    } finally {
      stop();
    }
    expect(sql, sql.join("\n")).toHaveLength(1);
    expect((await stored("both-a"))?.points).toBe(2);
    expect((await stored("both-b"))?.points).toBe(0);
    // The ended window keeps its count (the next attempt restarts it) and nothing is created.
    expect((await stored("both-ended"))?.points).toBe(2);
    expect(await stored("never-counted")).toBeNull();
    expect(await limits.consume("magicLink", "both-ended")).toEqual({ allowed: true });
    expect((await stored("both-ended"))?.points).toBe(1);
  });
});
