import { afterEach, describe, expect, it } from "vitest";
import { createMemoryStore } from "./memory-store";
import type { CacheStore } from "./store";

describe("memory cache store (without Redis)", () => {
  let clock = 1_000_000;
  const stores: CacheStore[] = [];
  function store(): CacheStore {
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

  it("does not share data between two stores", async () => {
    const one = store();
    const two = store();
    await one.set("k", "v");
    expect(await two.get("k")).toBeNull();
  });

  it("forgets everything when closed", async () => {
    const s = createMemoryStore(() => clock);
    await s.set("k", "v");
    await s.close();
    expect(await s.get("k")).toBeNull();
  });
});
