import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openMigratedDatabase, type MigratedDatabase } from "../../../test/support/migrated-database";
import { testLogger } from "../../../test/support/logs";
import { createPostgresStore } from "./postgres-store";
import type { KeyValueStore } from "./store";

const { logger: quietLogger } = testLogger();

// Against the test run's own database: PostgreSQL with DATABASE_URL, the embedded PGlite without.
describe("ephemeral store in the database", () => {
  let database: MigratedDatabase;
  let store: KeyValueStore;
  const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
  /** Moves an entry's expiry into the past, as the passing of its time to live would. */
  const expire = (key: string) =>
    database.db.executeSql(`UPDATE "EphemeralEntry" SET "expiresAt" = now() - interval '1 second' WHERE "key" = $1::text`, [key]);
  const expireSet = (key: string) =>
    database.db.executeSql(`UPDATE "EphemeralSetMember" SET "expiresAt" = now() - interval '1 second' WHERE "setKey" = $1::text`, [key]);

  beforeAll(async () => {
    database = await openMigratedDatabase();
    store = createPostgresStore(database.db, quietLogger);
  });
  afterAll(async () => {
    await store.close();
    await database.dispose();
  });

  it("stores, overwrites and deletes values", async () => {
    expect(await store.get("a")).toBeNull();
    await store.set("a", "1");
    await store.set("b", "2", 60);
    await store.set("a", "one");
    expect(await store.get("a")).toBe("one");
    await store.del("a", "b", "never-set");
    expect(await store.get("a")).toBeNull();
    expect(await store.get("b")).toBeNull();
  });

  it("keeps text of any size and every representable character", async () => {
    const value = JSON.stringify({ name: "Zoë ✓ 𝄞", blob: "x".repeat(200_000) });
    await store.set("big", value, 60);
    expect(await store.get("big")).toBe(value);
  });

  it("expires a value when its time to live has passed, by the database's clock", async () => {
    await store.set("short", "data", 1);
    expect(await store.get("short")).toBe("data");
    await sleep(1_100);
    expect(await store.get("short")).toBeNull();
    await store.set("session", "data", 3600);
    await expire("session");
    expect(await store.get("session")).toBeNull();
  });

  it("gives a fresh time to live when a value is set again, and none for 0", async () => {
    await store.set("k", "v1", 60);
    await expire("k");
    await store.set("k", "v2", 60);
    expect(await store.get("k")).toBe("v2");
    await store.set("forever", "x", 0);
    const rows = (await database.db.executeSql(`SELECT "expiresAt" FROM "EphemeralEntry" WHERE "key" = 'forever'`)).rows as Array<{ expiresAt: unknown }>;
    expect(rows[0]?.expiresAt).toBeNull();
  });

  it("take() hands a value to exactly one of several concurrent callers, and never an expired one", async () => {
    await store.set("code", "abc", 60);
    const results = await Promise.all(Array.from({ length: 5 }, () => store.take("code")));
    expect(results.filter((r) => r === "abc")).toHaveLength(1);
    expect(results.filter((r) => r === null)).toHaveLength(4);
    expect(await store.get("code")).toBeNull();
    await store.set("old", "abc", 60);
    await expire("old");
    expect(await store.take("old")).toBeNull();
  });

  it("replace() overwrites a live value and keeps its expiry; it does nothing when the value is gone", async () => {
    await store.set("interaction", "v1", 60);
    await store.replace("interaction", "v2");
    expect(await store.get("interaction")).toBe("v2");
    await expire("interaction");
    await store.replace("interaction", "v3");
    expect(await store.get("interaction")).toBeNull();
    await store.replace("never", "v");
    expect(await store.get("never")).toBeNull();
  });

  it("increment() gives each of many concurrent callers its own count, keeps the counter's expiry and starts over after it", async () => {
    const counts = await Promise.all(Array.from({ length: 20 }, () => store.increment("attempts", 60)));
    expect(counts.sort((a, b) => a - b)).toEqual(Array.from({ length: 20 }, (_, i) => i + 1));
    const before = (await database.db.executeSql(`SELECT "expiresAt" FROM "EphemeralEntry" WHERE "key" = 'attempts'`)).rows as Array<{ expiresAt: unknown }>;
    await store.increment("attempts", 3600);
    const after = (await database.db.executeSql(`SELECT "expiresAt" FROM "EphemeralEntry" WHERE "key" = 'attempts'`)).rows as Array<{ expiresAt: unknown }>;
    expect(String(after[0]?.expiresAt)).toBe(String(before[0]?.expiresAt));
    await expire("attempts");
    expect(await store.increment("attempts", 60)).toBe(1);
    await store.set("not-a-number", "abc", 60);
    expect(await store.increment("not-a-number", 60)).toBe(1);
  });

  it("reads several values and several sets in one step each, leaving out what expired", async () => {
    await store.set("many:a", "A", 60);
    await store.set("many:b", "B", 60);
    await store.set("many:gone", "G", 60);
    await expire("many:gone");
    expect(await store.getMany(["many:b", "many:none", "many:a", "many:gone"])).toEqual(["B", null, "A", null]);
    expect(await store.getMany([])).toEqual([]);
    await store.addToSet("many:s1", "x", 60);
    await store.addToSet("many:s1", "y", 60);
    await store.addToSet("many:s2", "z", 60);
    await store.addToSet("many:s3", "old", 60);
    await expireSet("many:s3");
    const sets = await store.membersOfSets(["many:s1", "many:s2", "many:s3", "many:empty"]);
    expect(Object.fromEntries([...sets].map(([k, v]) => [k, [...v].sort()]))).toEqual({ "many:s1": ["x", "y"], "many:s2": ["z"], "many:s3": [], "many:empty": [] });
  });

  it("keeps sets, gives every member the set's new time to live on add, and expires them", async () => {
    expect(await store.setMembers("grants")).toEqual([]);
    await store.addToSet("grants", "g1", 60);
    await store.addToSet("grants", "g2", 60);
    await store.addToSet("grants", "g1", 60);
    expect((await store.setMembers("grants")).sort()).toEqual(["g1", "g2"]);
    await expireSet("grants");
    await store.addToSet("grants", "g3", 60);
    // The older members were expired, but the add refreshed the whole set.
    expect((await store.setMembers("grants")).sort()).toEqual(["g1", "g2", "g3"]);
    await expireSet("grants");
    expect(await store.setMembers("grants")).toEqual([]);
  });

  it("lets many callers add to one set at once (sessions of one person signing in on several devices) without a deadlock", async () => {
    const members = Array.from({ length: 6 }, (_, i) => `session:${i}`);
    for (const member of members) await store.addToSet("account:sessions", member, 60);
    // Each re-save refreshes its own member and the others', from as many connections as the pool has.
    const results = await Promise.allSettled(Array.from({ length: 60 }, (_, i) => store.addToSet("account:sessions", members[i % members.length]!, 60)));
    expect(results.filter((r) => r.status === "rejected").map((r) => String((r as PromiseRejectedResult).reason))).toEqual([]);
    expect((await store.setMembers("account:sessions")).sort()).toEqual(members);
  });

  it("lets sets be deleted while others add to them (a sign-out beside new sign-ins) without a deadlock", async () => {
    const sets = ["grant:a", "grant:b", "grant:c"];
    const work = Array.from({ length: 60 }, (_, i) =>
      i % 4 === 0 ? store.del(...(i % 8 === 0 ? [...sets].reverse() : sets)) : store.addToSet(sets[i % sets.length]!, `token:${i % 5}`, 60),
    );
    const results = await Promise.allSettled(work);
    expect(results.filter((r) => r.status === "rejected").map((r) => String((r as PromiseRejectedResult).reason))).toEqual([]);
  });

  it("del() removes sets too, and sets and values do not see each other", async () => {
    await store.addToSet("k2", "member", 60);
    expect(await store.get("k2")).toBeNull();
    await store.set("k2", "value", 60);
    expect(await store.setMembers("k2")).toEqual(["member"]);
    await store.del("k2");
    expect(await store.setMembers("k2")).toEqual([]);
    expect(await store.get("k2")).toBeNull();
  });

  it("is shared by every store on the same database (another process, or this one after a restart)", async () => {
    const other = createPostgresStore(database.db, quietLogger);
    await store.set("shared", "v", 60);
    expect(await other.get("shared")).toBe("v");
    await other.close();
  });
});
