/**
 * Where the time goes in a .cpuprofile written with BENCH_PROFILE_DIR:
 *   node --import tsx bench/profile-summary.ts /tmp/prof/porta-client-credentials.cpuprofile [top]
 * Prints the time by layer (whole stacks: database, Prisma, oidc-provider, Express, …), self time by
 * package (or app file), and the top functions by self and by inclusive time. Only the main thread
 * is sampled: WebCrypto signing runs on libuv's thread pool and shows up only as its callbacks.
 */
import { readFileSync } from "node:fs";

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  hitCount?: number;
  children?: number[];
}
interface Profile {
  nodes: ProfileNode[];
  startTime: number;
  endTime: number;
  samples: number[];
  timeDeltas: number[];
}

function bucketOf(url: string, functionName: string): string {
  if (!url) return functionName.startsWith("(") ? functionName : "(native/v8)";
  const nm = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (nm) return nm[1]!;
  if (url.startsWith("node:")) return url;
  const app = /\/work\/main\/(.*)$/.exec(url.replace(/^file:\/\//, ""));
  return app ? app[1]! : url;
}

process.stdout.on("error", () => process.exit(0)); // e.g. piped into head
const file = process.argv[2];
if (!file) {
  console.error("usage: profile-summary.ts <file.cpuprofile> [top]");
  process.exit(2);
}
const top = Number(process.argv[3] ?? 25);
const profile = JSON.parse(readFileSync(file, "utf8")) as Profile;
const byId = new Map(profile.nodes.map((n) => [n.id, n]));
const parent = new Map<number, number>();
for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);

// Self time per node from the sample deltas (µs).
const self = new Map<number, number>();
// The first delta spans the time from Profiler.start to the first sample; it is no work.
profile.samples.forEach((id, i) => {
  if (i > 0) self.set(id, (self.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0));
});
const total = [...self.values()].reduce((a, b) => a + b, 0);
const idle = [...self.entries()].filter(([id]) => byId.get(id)?.callFrame.functionName === "(idle)").reduce((a, [, v]) => a + v, 0);

/** The layer a sample belongs to, judged from its whole stack (the first matching rule wins). */
function layerOf(stack: Array<{ url: string; functionName: string }>): string {
  const urls = stack.map((f) => f.url);
  const any = (re: RegExp) => urls.some((u) => re.test(u));
  const names = new Set(stack.map((f) => f.functionName));
  if (any(/@electric-sql\/pglite/)) return "PGlite (the embedded database, in-process)";
  if (any(/@prisma\/|pglite-prisma-adapter|adapter-pg|\/pg\/lib\//)) return "Prisma / pg driver";
  if (any(/ioredis|redis-store/)) return "ioredis";
  if (any(/pg-boss/)) return "pg-boss (job queue)";
  if (names.has("(garbage collector)")) return "garbage collector";
  if (names.has("(idle)")) return "idle";
  if (names.has("(program)")) return "(program)";
  if (any(/oidc-provider|\/koa\//)) return "oidc-provider + koa";
  if (any(/\/express\/|helmet|body-parser|app\/\.server\/(http|oidc\/mount)/)) return "Express, Helmet, request id, mount";
  if (any(/app\/\.server/)) return "other Porta code";
  if (urls.some((u) => u.startsWith("node:"))) return "node core (http, streams, timers)";
  if (any(/^wasm:/)) return "WebAssembly, caller not sampled";
  return "other / native";
}

const byLayer = new Map<string, number>();
for (const [id, us] of self) {
  const stack: Array<{ url: string; functionName: string }> = [];
  for (let cur: number | undefined = id; cur !== undefined; cur = parent.get(cur)) stack.push(byId.get(cur)!.callFrame);
  const layer = layerOf(stack);
  byLayer.set(layer, (byLayer.get(layer) ?? 0) + us);
}

const bySelf = new Map<string, number>();
const byBucket = new Map<string, number>();
const inclusive = new Map<string, number>();
for (const [id, us] of self) {
  const node = byId.get(id)!;
  const { functionName, url, lineNumber } = node.callFrame;
  const key = `${functionName || "(anonymous)"} ${bucketOf(url, functionName)}:${lineNumber + 1}`;
  bySelf.set(key, (bySelf.get(key) ?? 0) + us);
  const bucket = bucketOf(url, functionName);
  byBucket.set(bucket, (byBucket.get(bucket) ?? 0) + us);
  // Inclusive: credit every distinct frame on the stack once.
  const seen = new Set<string>();
  for (let cur: number | undefined = id; cur !== undefined; cur = parent.get(cur)) {
    const f = byId.get(cur)!.callFrame;
    const k = `${f.functionName || "(anonymous)"} ${bucketOf(f.url, f.functionName)}:${f.lineNumber + 1}`;
    if (seen.has(k)) continue;
    seen.add(k);
    inclusive.set(k, (inclusive.get(k) ?? 0) + us);
  }
}

const pct = (us: number) => `${((100 * us) / total).toFixed(1).padStart(5)}%`;
const busy = total - idle;
console.log(`${file}: ${(total / 1e6).toFixed(2)} s sampled, ${pct(busy)} busy`);
console.log("\ntime by layer (share of busy time)");
for (const [k, v] of [...byLayer].filter(([k]) => k !== "idle").sort((a, b) => b[1] - a[1])) {
  console.log(`${((100 * v) / busy).toFixed(1).padStart(5)}%  ${k}`);
}
console.log("\nself time by package / file (share of all samples)");
for (const [k, v] of [...byBucket].sort((a, b) => b[1] - a[1]).slice(0, top)) console.log(`${pct(v)}  ${k}`);
console.log("\ntop functions by self time");
for (const [k, v] of [...bySelf].sort((a, b) => b[1] - a[1]).slice(0, top)) console.log(`${pct(v)}  ${k}`);
console.log("\ntop functions by inclusive time");
for (const [k, v] of [...inclusive].sort((a, b) => b[1] - a[1]).slice(0, top)) console.log(`${pct(v)}  ${k}`);
