/**
 * Liveness and readiness for orchestrators (docs/operations.md): `/health/live` says the process answers
 * (no dependency is asked, so a database outage never gets a healthy process restarted);
 * `/health/ready` says this node should get traffic: its database answers, every migration this
 * build ships is applied (a node of a newer version waits for `npm run migrate`), and it is not
 * draining. At SIGTERM the node turns not-ready first, then stops accepting after
 * SHUTDOWN_DELAY_SECONDS, so a load balancer stops sending before connections are refused.
 * `/health` keeps its documented report.
 */
export interface ReadinessReport {
  status: "ready" | "not_ready";
  checks: { database: "ok" | "unavailable"; migrations: "ok" | "pending" | "unknown"; draining: boolean };
}

export interface ReadinessSources {
  ping(): Promise<void>;
  /** Names of the migrations recorded as applied. */
  appliedMigrations(): Promise<string[]>;
  /** Names of the migrations this build ships. */
  shippedMigrations(): Promise<string[]>;
}

export interface Readiness {
  check(): Promise<ReadinessReport>;
  markDraining(): void;
  readonly draining: boolean;
}

export function createReadiness(sources: ReadinessSources): Readiness {
  let draining = false;
  // Once every shipped migration is applied it stays so: later checks skip the query.
  let migrated = false;

  async function migrations(): Promise<ReadinessReport["checks"]["migrations"]> {
    if (migrated) return "ok";
    try {
      const [applied, shipped] = await Promise.all([sources.appliedMigrations(), sources.shippedMigrations()]);
      const done = new Set(applied);
      migrated = shipped.every((name) => done.has(name));
      return migrated ? "ok" : "pending";
    } catch {
      return "unknown";
    }
  }

  return {
    get draining() {
      return draining;
    },
    markDraining() {
      draining = true;
    },
    async check() {
      const database = await sources.ping().then(
        () => "ok" as const,
        () => "unavailable" as const,
      );
      const migrationState = database === "ok" ? await migrations() : "unknown";
      const ready = !draining && database === "ok" && migrationState === "ok";
      return { status: ready ? "ready" : "not_ready", checks: { database, migrations: migrationState, draining } };
    },
  };
}
