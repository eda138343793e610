import { afterEach, describe, expect, it } from "vitest";
import { createMemoryStore } from "./memory-store";
import type { KeyValueStore } from "./store";

describe("memory store (the embedded default)", () => {
  let clock = 1_000_000;
  const stores: KeyValueStore[] = [];
  function store(): KeyValueStore {
    const s = createMemoryStore(() => clock);
    stores.push(s);
    return s;
  }
  afterEach(async () => {
    for (const s of stores.splice(0)) await s.close();
    clock = 1_000_000;
  });

  it("says it is the memory store and always answers ping", async () => {
    const s = store();
    expect(s.kind).toBe("memory");
    await expect(s.ping()).resolves.toBeUndefined();
  });

  it("stores, overwrites and deletes values", async () => {
    const s = store();
    expect(await s.get("a")).toBeNull();
    await s.set("a", "1");
    await s.set("b", "2");
    await s.set("a", "one");
    expect(await s.get("a")).toBe("one");
    await s.del("a", "b", "never-set");
    expect(await s.get("a")).toBeNull();
    expect(await s.get("b")).toBeNull();
  });

  it("expires a value exactly when its time to live has passed", async () => {
    const s = store();
    await s.set("session", "data", 10);
    clock += 9_999;
    expect(await s.get("session")).toBe("data");
    clock += 1;
    expect(await s.get("session")).toBeNull();
    // Still gone when the clock is read again later.
    clock += 60_000;
    expect(await s.get("session")).toBeNull();
  });

  it("keeps a value without a time to live (or with 0) until it is deleted", async () => {
    const s = store();
    await s.set("forever", "x");
    await s.set("zero", "y", 0);
    clock += 365 * 24 * 3600 * 1000;
    expect(await s.get("forever")).toBe("x");
    expect(await s.get("zero")).toBe("y");
  });

  it("gives a fresh time to live when a value is set again", async () => {
    const s = store();
    await s.set("k", "v1", 5);
    clock += 4_000;
    await s.set("k", "v2", 5);
    clock += 4_000;
    expect(await s.get("k")).toBe("v2");
    clock += 1_000;
    expect(await s.get("k")).toBeNull();
  });

  it("take() returns a value once and deletes it", async () => {
    const s = store();
    await s.set("code", "abc", 60);
    expect(await s.take("code")).toBe("abc");
    expect(await s.take("code")).toBeNull();
    expect(await s.get("code")).toBeNull();
  });

  it("take() hands a value to exactly one of several concurrent callers", async () => {
    const s = store();
    await s.set("code", "abc", 60);
    const results = await Promise.all(Array.from({ length: 5 }, () => s.take("code")));
    expect(results.filter((r) => r === "abc")).toHaveLength(1);
    expect(results.filter((r) => r === null)).toHaveLength(4);
  });

  it("take() does not return an expired value", async () => {
    const s = store();
    await s.set("code", "abc", 1);
    clock += 1_000;
    expect(await s.take("code")).toBeNull();
  });

  it("replace() overwrites a live value and keeps its time to live; it does nothing when the value is gone", async () => {
    const s = store();
    await s.set("interaction", "v1", 10);
    clock += 6_000;
    await s.replace("interaction", "v2");
    expect(await s.get("interaction")).toBe("v2");
    clock += 4_000;
    expect(await s.get("interaction")).toBeNull();
    await s.replace("interaction", "v3");
    expect(await s.get("interaction")).toBeNull();
  });

  it("keeps sets with members, refreshes their time to live on add, and expires them", async () => {
    const s = store();
    expect(await s.setMembers("grants")).toEqual([]);
    await s.addToSet("grants", "g1", 10);
    await s.addToSet("grants", "g2", 10);
    await s.addToSet("grants", "g1", 10);
    expect((await s.setMembers("grants")).sort()).toEqual(["g1", "g2"]);
    clock += 8_000;
    await s.addToSet("grants", "g3", 10);
    clock += 8_000;
    expect((await s.setMembers("grants")).sort()).toEqual(["g1", "g2", "g3"]);
    clock += 2_000;
    expect(await s.setMembers("grants")).toEqual([]);
    // A set that expired starts empty when added to again.
    await s.addToSet("grants", "g4", 10);
    expect(await s.setMembers("grants")).toEqual(["g4"]);
  });

  it("del() removes sets too, and sets and values do not see each other", async () => {
    const s = store();
    await s.addToSet("k", "member", 60);
    expect(await s.get("k")).toBeNull();
    await s.set("k", "value", 60);
    expect(await s.setMembers("k")).toEqual(["member"]);
    await s.del("k");
    expect(await s.setMembers("k")).toEqual([]);
    expect(await s.get("k")).toBeNull();
  });

  it("delivers published messages to every subscriber of the channel, and stops after unsubscribe", async () => {
    const s = store();
    const a: string[] = [];
    const b: string[] = [];
    const other: string[] = [];
    const unsubscribeA = await s.subscribe("org:changed", (m) => a.push(m));
    await s.subscribe("org:changed", (m) => b.push(m));
    await s.subscribe("client:changed", (m) => other.push(m));
    await s.publish("org:changed", "acme");
    await unsubscribeA();
    await s.publish("org:changed", "globex");
    expect(a).toEqual(["acme"]);
    expect(b).toEqual(["acme", "globex"]);
    expect(other).toEqual([]);
  });

  it("does not share data between two stores", async () => {
    const one = store();
    const two = store();
    await one.set("k", "v");
    const heard: string[] = [];
    await two.subscribe("c", (m) => heard.push(m));
    await one.publish("c", "hello");
    expect(await two.get("k")).toBeNull();
    expect(heard).toEqual([]);
  });

  it("forgets everything and stops delivering messages when closed", async () => {
    const s = createMemoryStore(() => clock);
    const heard: string[] = [];
    await s.set("k", "v");
    await s.addToSet("set", "m", 60);
    await s.subscribe("c", (m) => heard.push(m));
    await s.close();
    expect(await s.get("k")).toBeNull();
    expect(await s.setMembers("set")).toEqual([]);
    await s.publish("c", "after close");
    expect(heard).toEqual([]);
  });
});
