import { describe, expect, it } from "vitest";
import { AppError } from "../../errors";
import { decodeCursor, encodeCursor, listMode, listPage } from "./pagination";

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
