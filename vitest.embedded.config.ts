import { defineConfig } from "vitest/config";
import base from "./vitest.config";

/**
 * CI's second vitest stage: the embedded default (PGlite and the in-process cache, no
 * DATABASE_URL or REDIS_URL). The first stage runs every file on PostgreSQL + Redis, and
 * test/store-contract.test.ts proves there that each kind of store operation Porta makes answers
 * the same on PGlite as on PostgreSQL and on the in-process cache as on Redis; tests that are
 * about the embedded default itself (first run, DATA_DIR lock, restarts on PGlite, the dev outbox)
 * start it in that stage already, whatever the run's database. What runs here is what differs
 * between the stores beyond single operations: the code that talks to a store directly, the job
 * queue on one database process (the sole-process mode: recovery, wake-ups), the migrations and
 * start-up against the run's own database, and one journey of each protocol flow end to end.
 */
export const EMBEDDED_STAGE = [
  // The store layer itself.
  "app/.server/cache/*.test.ts",
  "app/.server/rate-limit/*.test.ts",
  "app/.server/oidc/storage/revoked-tokens.test.ts",
  "app/.server/sign-in/magic-link-pairing.test.ts",
  // Migrations, bootstrap, health and restarts on the run's own database.
  "test/migrations.test.ts",
  "test/schema-agreement.test.ts",
  "test/bootstrap.test.ts",
  "test/health.test.ts",
  "test/restart.test.ts",
  "test/write-atomicity.test.ts",
  "test/cache-fallback.test.ts",
  "test/oidc/legacy-keys.test.ts",
  "test/oidc/tenant-load.test.ts",
  // The job queue as the only process on its database.
  "test/email/magic-link.test.ts",
  "test/email/wake-on-work.test.ts",
  "test/email/delivery-retry.test.ts",
  "test/email/worker-restart.test.ts",
  "test/email/outbox-after-crash.test.ts",
  // One journey of each flow: sign-in, tokens, sessions, the Admin API.
  "test/oidc/authorization-code.test.ts",
  "test/oidc/refresh-tokens.test.ts",
  "test/oidc/introspection-revocation.test.ts",
  "test/oidc/client-credentials.test.ts",
  "test/login/password-failures.test.ts",
  "test/login/sign-in-atomicity.test.ts",
  "test/admin/users.test.ts",
];

// Spread, not mergeConfig: that would add these to the base config's include instead of replacing it.
export default defineConfig({ ...base, test: { ...base.test, include: EMBEDDED_STAGE } });
