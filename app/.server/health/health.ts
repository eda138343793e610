import type { Database } from "../db/client";
import type { ReadThroughCache } from "../cache/read-through";
import type { Mailer } from "../mail/mailer";
import type { KeyService } from "../oidc/provider/keys";

export type CheckState = "ok" | "unavailable";

export interface HealthReport {
  status: "ok" | "degraded" | "unavailable";
  checks: { database: CheckState; cache: CheckState; mail: "ok" | "degraded"; keys: CheckState };
}

const DATABASE_TIMEOUT_MS = 1_000;
const CACHE_TIMEOUT_MS = 500;

async function probe(check: () => Promise<void>, timeoutMs: number): Promise<CheckState> {
  let timer: NodeJS.Timeout | undefined;
  try {
    await Promise.race([
      check(),
      new Promise((_, reject) => {
        timer = setTimeout(() => reject(new Error("timeout")), timeoutMs);
      }),
    ]);
    return "ok";
  } catch {
    return "unavailable";
  } finally {
    clearTimeout(timer);
  }
}

/**
 * PostgreSQL is required (503 without it); the cache is not, since every read falls back to
 * the database, so a cache outage only degrades. Mail is not probed (a probe would open an SMTP
 * session per request): it is degraded while the last delivery failed, since the jobs wait and
 * retry, until one succeeds.
 */
export async function checkHealth(
  db: Database,
  readCache: Pick<ReadThroughCache, "ping">,
  mailer: Pick<Mailer, "health">,
  keys: Pick<KeyService, "canDecryptStoredKeys">,
): Promise<HealthReport> {
  const [database, cache] = await Promise.all([
    probe(() => db.ping(DATABASE_TIMEOUT_MS), DATABASE_TIMEOUT_MS),
    probe(() => readCache.ping(), CACHE_TIMEOUT_MS),
  ]);
  // Signing keys this process cannot decrypt (written under another ENCRYPTION_KEY) fail every
  // token of their organization: the node is not ready, whatever else answers (decision 023).
  const keysOk = database === "ok" ? await keys.canDecryptStoredKeys().catch(() => true) : true;
  const mail = mailer.health();
  const status = database === "unavailable" || !keysOk ? "unavailable" : cache === "unavailable" || mail === "degraded" ? "degraded" : "ok";
  return { status, checks: { database, cache, mail, keys: keysOk ? "ok" : "unavailable" } };
}
