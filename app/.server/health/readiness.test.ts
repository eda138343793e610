import { describe, expect, it } from "vitest";
import { createReadiness, type ReadinessSources } from "./readiness";

const sources = (overrides: Partial<ReadinessSources> = {}): ReadinessSources => ({
  ping: async () => undefined,
  appliedMigrations: async () => ["20260101000000_a", "20260102000000_b"],
  shippedMigrations: async () => ["20260101000000_a", "20260102000000_b"],
  ...overrides,
});

describe("readiness", () => {
  it("is ready when the database answers and every shipped migration is applied", async () => {
    expect(await createReadiness(sources()).check()).toEqual({ status: "ready", checks: { database: "ok", migrations: "ok", draining: false } });
  });

  it("is not ready while a migration this build ships is not applied (a newer node before `npm run migrate`)", async () => {
    let applied = ["20260101000000_a"];
    const readiness = createReadiness(sources({ appliedMigrations: async () => applied }));
    expect((await readiness.check()).checks.migrations).toBe("pending");
    expect((await readiness.check()).status).toBe("not_ready");
    applied = ["20260101000000_a", "20260102000000_b"];
    expect((await readiness.check()).status).toBe("ready");
  });

  it("is not ready without its database, and says so without asking for migrations", async () => {
    let asked = 0;
    const readiness = createReadiness(sources({ ping: () => Promise.reject(new Error("down")), appliedMigrations: async () => (asked++, []) }));
    expect(await readiness.check()).toEqual({ status: "not_ready", checks: { database: "unavailable", migrations: "unknown", draining: false } });
    expect(asked).toBe(0);
  });

  it("turns not ready for good once draining", async () => {
    const readiness = createReadiness(sources());
    readiness.markDraining();
    expect(await readiness.check()).toEqual({ status: "not_ready", checks: { database: "ok", migrations: "ok", draining: true } });
    expect(readiness.draining).toBe(true);
  });
});
