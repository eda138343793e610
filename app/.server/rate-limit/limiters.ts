import { RateLimiterPrisma, RateLimiterRes } from "rate-limiter-flexible";
import type { Database } from "../db/client";
import { SETTINGS, type SettingKey } from "../settings/registry";
import type { Settings } from "../settings/settings";

/**
 * The rate limits: the spec's table (per account) and the same actions per client address.
 * The counters live in PostgreSQL (table "RateLimiterFlexible", rate-limiter-flexible's
 * RateLimiterPrisma), the one store that must answer: they are shared by every process, survive
 * a restart and do not depend on Redis. The rules are configuration entries read at consume
 * time, so a change through the Admin API applies without a restart.
 *
 * Never consume inside an interactive transaction: the limiter uses the shared client, which on
 * the embedded database has a single connection that the transaction holds.
 */
export interface LimitRule {
  points: number;
  durationSeconds: number;
}

/** Each limit and the configuration entry that holds its rule. */
const RULE_SETTINGS = {
  /** Password attempts per email and organization (clients without the account's device cookie). */
  passwordLogin: "rateLimits.passwordLogin.perAccount",
  /** Password attempts per client address (clients without the account's device cookie). */
  passwordLoginIp: "rateLimits.passwordLogin.perIp",
  magicLink: "rateLimits.magicLink.perAccount",
  magicLinkIp: "rateLimits.magicLink.perIp",
  passwordReset: "rateLimits.passwordReset.perAccount",
  passwordResetIp: "rateLimits.passwordReset.perIp",
  twoFactor: "rateLimits.twoFactor.perUser",
  twoFactorIp: "rateLimits.twoFactor.perIp",
  emailOtpResend: "rateLimits.emailOtpResend.perUser",
  /** Failed passkey sign-ins per client address (a right one gives its point back). */
  passkeyLoginIp: "rateLimits.passkeyLogin.perIp",
  /** Failed sign-ins through an upstream identity provider per client address (a successful one gives its point back). */
  federatedLoginIp: "rateLimits.federatedLogin.perIp",
  /** The same per interaction: one sign-in may not try forged or replayed answers without end. */
  federatedLogin: "rateLimits.federatedLogin.perInteraction",
  /** User codes entered on the device sign-in page per client address (RFC 8628 §5.1, decision 049). */
  deviceCodeEntryIp: "rateLimits.deviceCodeEntry.perIp",
  /** Requests to an organization's registration endpoints per client address (decision 054). */
  clientRegistrationIp: "rateLimits.clientRegistration.perIp",
  /** Requests to an organization's SCIM endpoint per client address (decision 084). */
  scimIp: "rateLimits.scim.perIp",
  /** The same per SCIM token: one provisioning client cannot take the whole database. */
  scimToken: "rateLimits.scim.perToken",
  /** Requests to an organization's Shared Signals endpoints per client address (decision 093). */
  ssfIp: "rateLimits.ssf.perIp",
  /** The same per receiver's client: one receiver cannot take the whole database. */
  ssfClient: "rateLimits.ssf.perClient",
} as const satisfies Record<string, SettingKey>;

/**
 * `deviceFailures` counts the failed passwords of one device cookie (OWASP device cookies): the
 * account lockout's rule, applied to that device alone.
 */
export type LimitName = keyof typeof RULE_SETTINGS | "deviceFailures";

export type RuleSource = (name: LimitName) => Promise<LimitRule>;

const minutes = (rule: { points: number; windowMinutes: number }): LimitRule => ({ points: rule.points, durationSeconds: rule.windowMinutes * 60 });

/** The rules as configured (each read through the settings' short cache). */
export function rulesFromSettings(settings: Pick<Settings, "get">): RuleSource {
  return async (name) => {
    if (name === "deviceFailures") {
      const [points, cooldown] = await Promise.all([settings.get("auth.lockout.maxFailures"), settings.get("auth.lockout.cooldownMinutes")]);
      return { points, durationSeconds: cooldown * 60 };
    }
    return minutes(await settings.get(RULE_SETTINGS[name]));
  };
}

/** The rules as shipped (the registry's defaults), for callers and tests without a settings store. */
export const DEFAULT_LIMITS = {
  ...(Object.fromEntries(Object.entries(RULE_SETTINGS).map(([name, key]) => [name, minutes(SETTINGS[key].default)])) as Record<keyof typeof RULE_SETTINGS, LimitRule>),
  deviceFailures: { points: SETTINGS["auth.lockout.maxFailures"].default, durationSeconds: SETTINGS["auth.lockout.cooldownMinutes"].default * 60 },
} satisfies Record<LimitName, LimitRule>;

export const defaultRules: RuleSource = async (name) => DEFAULT_LIMITS[name];

export type LimitOutcome = { allowed: true } | { allowed: false; retryAfterSeconds: number };

export interface RateLimits {
  /** Counts one attempt; refused once the key has used up its points in the current window. */
  consume(name: LimitName, key: string): Promise<LimitOutcome>;
  /** Whether the key has used up its points, without counting an attempt. */
  check(name: LimitName, key: string): Promise<LimitOutcome>;
  reset(name: LimitName, key: string): Promise<void>;
  /** Gives back one point consumed by an attempt that turned out to succeed (limits that count failures only). */
  refund(name: LimitName, key: string): Promise<void>;
  /** The same for several counters, in one statement. */
  refundAll(checks: Array<[LimitName, string]>): Promise<void>;
  /** Deletes the counters whose window has ended (also done in passing, at most every few minutes). */
  sweep(): Promise<number>;
  /**
   * The highest count among the named counters in their current window (0 when none runs): one
   * read, no write, for what asks how often a key failed without counting an attempt.
   */
  highestCount(checks: Array<[LimitName, string]>): Promise<number>;
}

/**
 * One attempt counted in one statement: RateLimiterPrisma deletes an ended window and then upserts
 * (two statements, ~0.55 ms each on PostgreSQL; decision 026). INSERT … ON CONFLICT does both under the
 * row's lock: an ended window restarts at `points`, a current one adds them, so attempts made at
 * once are all counted. PostgreSQL evaluates every SET expression against the row as it was, so
 * both CASEs see the old "expire". A row without an expiry never ends, as in RateLimiterPrisma.
 */
const COUNT_ATTEMPT = `INSERT INTO "RateLimiterFlexible" ("key", "points", "expire") VALUES ($1::text, $2::int, $3::timestamptz)
  ON CONFLICT ("key") DO UPDATE SET
    "points" = CASE WHEN $4::boolean OR "RateLimiterFlexible"."expire" <= $5::timestamptz THEN EXCLUDED."points" ELSE "RateLimiterFlexible"."points" + EXCLUDED."points" END,
    "expire" = CASE WHEN $4::boolean OR "RateLimiterFlexible"."expire" <= $5::timestamptz THEN EXCLUDED."expire" ELSE "RateLimiterFlexible"."expire" END
  RETURNING "points", "expire"`;

/** RateLimiterPrisma with its store write (`_upsert`, which consume, penalty and reward use) in one statement. */
class OneStatementLimiter extends RateLimiterPrisma {
  constructor(
    private readonly db: Pick<Database, "query">,
    options: ConstructorParameters<typeof RateLimiterPrisma>[0],
  ) {
    super(options);
  }

  /** Called by RateLimiterStoreAbstract; `forceExpire` (set, block) replaces the window outright. */
  async _upsert(key: string, points: number, msDuration: number, forceExpire = false): Promise<{ points: number; expire: Date | null }> {
    const now = new Date();
    const expire = msDuration > 0 ? new Date(now.getTime() + msDuration) : null;
    const [row] = await this.db.query<{ points: number; expire: Date | null }>(COUNT_ATTEMPT, [key, points, expire, forceExpire, now]);
    if (!row) throw new Error("the rate-limit counter was not written");
    return row;
  }
}

/**
 * Gives one point back to each named counter whose window is still running, in one statement. An
 * ended or missing window is left alone: the next attempt starts a fresh one anyway, and a row
 * restarted at -1 would give the key a point it never paid.
 */
const REFUND_ATTEMPTS = `UPDATE "RateLimiterFlexible" SET "points" = GREATEST("points" - 1, 0)
  WHERE "key" = ANY($1::text[]) AND ("expire" IS NULL OR "expire" > $2::timestamptz)`;

const HIGHEST_COUNT = `SELECT COALESCE(MAX("points"), 0)::int AS "points" FROM "RateLimiterFlexible"
  WHERE "key" = ANY($1::text[]) AND ("expire" IS NULL OR "expire" > $2::timestamptz)`;

/** The row a limit keeps for a key (rate-limiter-flexible's `keyPrefix:key`). */
export const counterKey = (name: LimitName, key: string) => `rl:${name}:${key}`;

/** Expired counters are deleted at most this often, in passing, by a consume. */
const SWEEP_EVERY_MS = 5 * 60_000;

const refusal = (msBeforeNext: number): LimitOutcome => ({ allowed: false, retryAfterSeconds: Math.max(1, Math.ceil(msBeforeNext / 1000)) });

export function createRateLimits(db: Pick<Database, "prisma" | "query">, rules: RuleSource = defaultRules): RateLimits {
  const { prisma } = db;
  // One limiter per distinct rule: a rule changed at run time gets its own limiter over the same
  // counters (the key prefix is the limit's name), so the counts made so far keep counting.
  const limiters = new Map<string, OneStatementLimiter>();
  async function limiter(name: LimitName) {
    const rule = await rules(name);
    const id = `${name}:${rule.points}:${rule.durationSeconds}`;
    let found = limiters.get(id);
    if (!found) {
      found = new OneStatementLimiter(db, {
        storeClient: prisma,
        // The client's model accessor, not the table's name.
        tableName: "rateLimiterFlexible",
        // counterKey(name, key) is the row's key.
        keyPrefix: `rl:${name}`,
        points: rule.points,
        duration: rule.durationSeconds,
        // Swept below, once for all limiters, instead of a timer per limiter.
        clearExpiredByTimeout: false,
      });
      limiters.set(id, found);
    }
    return found;
  }

  let lastSweep = Date.now();
  const sweep = async () => (await prisma.rateLimiterFlexible.deleteMany({ where: { expire: { lt: new Date() } } })).count;

  return {
    async consume(name, key) {
      if (Date.now() - lastSweep > SWEEP_EVERY_MS) {
        lastSweep = Date.now();
        void sweep().catch(() => undefined);
      }
      try {
        await (await limiter(name)).consume(key);
        return { allowed: true };
      } catch (result) {
        if (result instanceof RateLimiterRes) return refusal(result.msBeforeNext);
        throw result;
      }
    },
    async check(name, key) {
      const l = await limiter(name);
      const res = await l.get(key);
      return res && res.consumedPoints >= l.points ? refusal(res.msBeforeNext) : { allowed: true };
    },
    async reset(name, key) {
      await (await limiter(name)).delete(key);
    },
    async refund(name, key) {
      await db.query(REFUND_ATTEMPTS, [[counterKey(name, key)], new Date()]);
    },
    async refundAll(checks) {
      if (checks.length > 0) await db.query(REFUND_ATTEMPTS, [checks.map(([name, key]) => counterKey(name, key)), new Date()]);
    },
    sweep,
    async highestCount(checks) {
      if (checks.length === 0) return 0;
      const [row] = await db.query<{ points: number }>(HIGHEST_COUNT, [checks.map(([name, key]) => counterKey(name, key)), new Date()]);
      return row?.points ?? 0;
    },
  };
}

/**
 * Gives back what `consumeEach` took for an attempt that succeeded. The point is taken before the
 * check (so parallel guesses cannot overrun the limit) and returned after a success, so that the
 * limit counts failures only.
 */
export async function refundEach(limits: RateLimits, checks: Array<[LimitName, string | null]>): Promise<void> {
  await limits.refundAll(checks.filter((check): check is [LimitName, string] => check[1] !== null));
}

/**
 * Consumes each limit in turn (a null key, such as an unknown client address, is skipped) and
 * stops at the first refusal, so a refused request costs the later counters nothing.
 */
export async function consumeEach(limits: RateLimits, checks: Array<[LimitName, string | null]>): Promise<LimitOutcome> {
  for (const [name, key] of checks) {
    if (key === null) continue;
    const outcome = await limits.consume(name, key);
    if (!outcome.allowed) return outcome;
  }
  return { allowed: true };
}
