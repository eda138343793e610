import { describe, expect, it } from "vitest";
import { AppError } from "../../errors";
import { boundedCount, decodeCursor, encodeCursor, listMode, listPage } from "./pagination";

const ids = Array.from({ length: 5 }, (_, i) => `0190a000-0000-7000-8000-00000000000${i}`);

/** An in-memory listing that records how often the total was counted. */
function source() {
  const calls = { count: 0 };
  return {
    calls,
    fetch: {
      count: async () => {
        calls.count++;
        return ids.length;
      },
      offset: async (skip: number, take: number) => ids.slice(skip, skip + take).map((id) => ({ id })),
      after: async (afterId: string | null, take: number) => ids.filter((id) => afterId === null || id > afterId).slice(0, take).map((id) => ({ id })),
    },
  };
}

describe("listPage in cursor mode", () => {
  it("counts the total on the first page only and carries it through the walk", async () => {
    const { calls, fetch } = source();
    const seen: string[] = [];
    let cursor: string | undefined;
    let pages = 0;
    do {
      const page = await listPage(listMode({ limit: 2, ...(cursor ? { cursor } : {}) }), fetch);
      expect(page.total).toBe(5);
      seen.push(...page.data.map((r) => r.id));
      cursor = page.cursor;
      pages++;
    } while (cursor);
    expect(seen).toEqual(ids);
    expect(pages).toBe(3);
    expect(calls.count).toBe(1);
  });

  it("still accepts a cursor without a carried total, and counts then", async () => {
    const { calls, fetch } = source();
    const page = await listPage(listMode({ limit: 2, cursor: encodeCursor([null, ids[1]!]) }), fetch);
    expect(page.data.map((r) => r.id)).toEqual([ids[2], ids[3]]);
    expect(page.total).toBe(5);
    expect(calls.count).toBe(1);
  });

  it("refuses a cursor whose carried total is not a non-negative integer", () => {
    for (const total of [-1, 1.5, "7", null]) {
      const forged = Buffer.from(JSON.stringify([null, ids[0], total]), "utf8").toString("base64url");
      expect(() => decodeCursor(forged), String(total)).toThrow(AppError);
    }
  });
});

describe("a total counted up to a bound", () => {
  const upTo = (rows: number) => async (take: number) => Math.min(rows, take);

  it("is exact up to the bound and a lower bound past it", async () => {
    expect(await boundedCount(upTo(3), 3)).toEqual({ total: 3, lowerBound: false });
    expect(await boundedCount(upTo(4), 3)).toEqual({ total: 3, lowerBound: true });
    expect(await boundedCount(upTo(0), 3)).toEqual({ total: 0, lowerBound: false });
  });

  it("says so in the envelope, and a cursor walk counts again instead of carrying it as exact", async () => {
    const { calls, fetch } = source();
    const bounded = { ...fetch, count: () => boundedCount(async (take) => (calls.count++, Math.min(ids.length, take)), 3) };
    const offset = await listPage(listMode({ page: 1, pageSize: 2 }), bounded);
    expect(offset).toMatchObject({ total: 3, totalIsLowerBound: true, page: 1, pageSize: 2 });
    const first = await listPage(listMode({ limit: 2 }), bounded);
    expect(first).toMatchObject({ total: 3, totalIsLowerBound: true });
    expect(decodeCursor(first.cursor!)).toHaveLength(2);
    const second = await listPage(listMode({ limit: 2, cursor: first.cursor! }), bounded);
    expect(second).toMatchObject({ total: 3, totalIsLowerBound: true });
    expect(calls.count).toBe(3);
  });

  it("leaves an exact total's envelope as it was", async () => {
    const { fetch } = source();
    const page = await listPage(listMode({ page: 1, pageSize: 2 }), fetch);
    expect(Object.keys(page).sort()).toEqual(["data", "page", "pageSize", "total"]);
  });
});
