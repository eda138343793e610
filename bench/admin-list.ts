/**
 * Admin API list latency at scale: GET /api/admin/organizations/{orgId}/users on an organization
 * of SEED_ADMIN_LIST_USERS users (see admin-list-seed.ts), one request at a time so that each
 * latency is the request's own, not a queue's. Offset mode on page 1 and on page 1,000, and
 * cursor mode walking the cursor chain from the first page onwards.
 */
import { performance } from "node:perf_hooks";
import type { AdminListSeed } from "./flow";

export const LIST_PAGE_SIZE = 100;
const OFFSET_REQUESTS = 100;
const CURSOR_PAGES = 1_000;
const WARMUP_REQUESTS = 10;

export interface LatencySummary {
  requests: number;
  p50: number;
  p95: number;
  p99: number;
  max: number;
}

export interface AdminListFigures {
  users: number;
  seedSeconds: number;
  offsetFirst: LatencySummary;
  offsetDeep: LatencySummary;
  deepPage: number;
  cursor: LatencySummary;
  /** Rows the cursor walk saw, each id once: proves the walk was complete and without repeats. */
  cursorRows: number;
}

function summary(latencies: number[]): LatencySummary {
  const sorted = [...latencies].sort((a, b) => a - b);
  const at = (p: number) => sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!;
  return { requests: sorted.length, p50: at(50), p95: at(95), p99: at(99), max: sorted[sorted.length - 1]! };
}

interface ListBody {
  data: Array<{ id: string }>;
  total: number;
  cursor?: string;
}

export async function measureAdminList(baseUrl: string, seed: AdminListSeed): Promise<AdminListFigures> {
  const url = `${baseUrl}/api/admin/organizations/${seed.organizationId}/users`;
  const headers = { authorization: `Bearer ${seed.accessToken}` };
  async function get(query: string): Promise<{ ms: number; body: ListBody }> {
    const t0 = performance.now();
    const res = await fetch(`${url}?${query}`, { headers });
    const text = await res.text();
    const ms = performance.now() - t0;
    if (res.status !== 200) throw new Error(`admin list ${query}: ${res.status} ${text.slice(0, 300)}`);
    const body = JSON.parse(text) as ListBody;
    if (body.total !== seed.users) throw new Error(`admin list ${query}: total ${body.total}, expected ${seed.users}`);
    return { ms, body };
  }
  async function repeat(query: string, expectRows: number): Promise<LatencySummary> {
    for (let i = 0; i < WARMUP_REQUESTS; i++) await get(query);
    const latencies: number[] = [];
    for (let i = 0; i < OFFSET_REQUESTS; i++) {
      const { ms, body } = await get(query);
      if (body.data.length !== expectRows) throw new Error(`admin list ${query}: ${body.data.length} rows, expected ${expectRows}`);
      latencies.push(ms);
    }
    return summary(latencies);
  }

  const deepPage = 1_000;
  const lastPageRows = Math.max(0, Math.min(LIST_PAGE_SIZE, seed.users - (deepPage - 1) * LIST_PAGE_SIZE));
  const offsetFirst = await repeat(`page=1&pageSize=${LIST_PAGE_SIZE}`, Math.min(LIST_PAGE_SIZE, seed.users));
  const offsetDeep = await repeat(`page=${deepPage}&pageSize=${LIST_PAGE_SIZE}`, lastPageRows);

  for (let i = 0; i < WARMUP_REQUESTS; i++) await get(`limit=${LIST_PAGE_SIZE}`);
  const latencies: number[] = [];
  const seen = new Set<string>();
  let cursor: string | undefined;
  for (let page = 0; page < CURSOR_PAGES; page++) {
    const { ms, body } = await get(`limit=${LIST_PAGE_SIZE}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""}`);
    latencies.push(ms);
    for (const row of body.data) {
      if (seen.has(row.id)) throw new Error(`cursor walk returned ${row.id} twice`);
      seen.add(row.id);
    }
    cursor = body.cursor;
    if (!cursor) break;
  }
  return { users: seed.users, seedSeconds: seed.seedSeconds, offsetFirst, offsetDeep, deepPage, cursor: summary(latencies), cursorRows: seen.size };
}
