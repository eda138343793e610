import { describe, expect, it } from "vitest";
import { createProviderPool, poolCapacity } from "./provider-pool";

const KB = 1024;

function pool(entries: number, options: { protectedShare?: number; maxAgeMs?: number; now?: () => number } = {}) {
  return createProviderPool<string>({ maxBytes: entries * 80 * KB, bytesPerEntry: 80 * KB, maxAgeMs: options.maxAgeMs ?? 60_000, ...options });
}

describe("provider pool", () => {
  it("holds as many providers as the memory budget pays for", () => {
    expect(poolCapacity(64 * 1024 * KB, 80 * KB)).toBe(819);
    expect(poolCapacity(1, 80 * KB)).toBe(2);
    const p = pool(10);
    for (let i = 0; i < 25; i++) p.set(`org-${i}`, `provider ${i}`);
    expect(p.capacity).toBe(10);
    expect(p.size).toBeLessThanOrEqual(10);
    expect(p.get("org-24")).toBe("provider 24");
  });

  it("fills its whole capacity with organizations asked for once, when none is hot", () => {
    const p = pool(10);
    for (let i = 0; i < 10; i++) p.set(`org-${i}`, `provider ${i}`);
    expect(p.size).toBe(10);
    p.set("org-10", "provider 10");
    expect(p.size).toBe(10);
    expect(p.get("org-0")).toBeUndefined();
    expect(p.get("org-1")).toBe("provider 1");
  });

  it("keeps organizations asked for again while a sweep over many others passes through", () => {
    const p = pool(10);
    for (const hot of ["a", "b", "c"]) {
      p.set(hot, hot);
      expect(p.get(hot)).toBe(hot);
    }
    // A round-robin over 1,000 organizations, each asked for once, with the hot ones in between.
    for (let i = 0; i < 1_000; i++) {
      const slug = `org-${i}`;
      if (p.get(slug) === undefined) p.set(slug, slug);
      if (i % 100 === 0) for (const hot of ["a", "b", "c"]) expect(p.get(hot)).toBe(hot);
    }
    for (const hot of ["a", "b", "c"]) expect(p.get(hot)).toBe(hot);
    expect(p.size).toBeLessThanOrEqual(10);
  });

  it("gives a hot organization pushed out by newer hot ones a second chance on probation", () => {
    const p = pool(4, { protectedShare: 0.5 });
    for (const slug of ["a", "b", "c"]) {
      p.set(slug, slug);
      p.get(slug);
    }
    // "a" left the protected segment (two places) for probation, not the pool.
    expect(p.entries().map(([key]) => key).sort()).toEqual(["a", "b", "c"]);
    expect(p.get("a")).toBe("a");
  });

  it("drops an entry once it is older than the maximum age, however often it was used", () => {
    let now = 0;
    const p = pool(10, { maxAgeMs: 1_000, now: () => now });
    p.set("a", "a");
    now = 600;
    expect(p.get("a")).toBe("a");
    now = 1_000;
    expect(p.get("a")).toBeUndefined();
    expect(p.size).toBe(0);
  });

  it("deletes and clears from both segments", () => {
    const p = pool(10);
    p.set("a", "a");
    p.get("a");
    p.set("b", "b");
    p.delete("a");
    expect(p.get("a")).toBeUndefined();
    expect(p.get("b")).toBe("b");
    p.set("c", "c");
    p.clear();
    expect(p.size).toBe(0);
    expect(p.entries()).toEqual([]);
  });

  it("replaces an entry that is set again (a rebuild) and keeps one copy", () => {
    const p = pool(10);
    p.set("a", "first");
    p.get("a");
    p.set("a", "second");
    expect(p.get("a")).toBe("second");
    expect(p.entries()).toEqual([["a", "second"]]);
  });
});
