import { RateLimiterMemory, RateLimiterRedis, RateLimiterRes, type RateLimiterAbstract } from "rate-limiter-flexible";
import type { Redis } from "ioredis";

/**
 * The rate limits of the spec's table. With Redis they are shared by every process, with an
 * in-memory insurance limiter taking over while Redis is away; without Redis, memory only.
 */
export interface LimitRule {
  points: number;
  durationSeconds: number;
}

export const DEFAULT_LIMITS = {
  /** Password login attempts per email and organization. */
  passwordLogin: { points: 10, durationSeconds: 15 * 60 },
  /** Magic link requests per email and organization. */
  magicLink: { points: 5, durationSeconds: 15 * 60 },
  /** 2FA code verifications per user. */
  twoFactor: { points: 10, durationSeconds: 15 * 60 },
  /** New email codes a user may ask for while signing in (each one is a mail). */
  emailOtpResend: { points: 5, durationSeconds: 15 * 60 },
  /** Password reset requests per email. */
  passwordReset: { points: 5, durationSeconds: 60 * 60 },
} satisfies Record<string, LimitRule>;

export type LimitName = keyof typeof DEFAULT_LIMITS;

export type LimitOutcome = { allowed: true } | { allowed: false; retryAfterSeconds: number };

export interface RateLimits {
  consume(name: LimitName, key: string): Promise<LimitOutcome>;
  reset(name: LimitName, key: string): Promise<void>;
}

export function createRateLimits(redis: Redis | undefined, rules: Record<LimitName, LimitRule> = DEFAULT_LIMITS): RateLimits {
  const limiters = new Map<LimitName, RateLimiterAbstract>();
  for (const [name, rule] of Object.entries(rules) as Array<[LimitName, LimitRule]>) {
    const memory = new RateLimiterMemory({ keyPrefix: `rl:${name}`, points: rule.points, duration: rule.durationSeconds });
    limiters.set(
      name,
      redis
        ? new RateLimiterRedis({
            storeClient: redis,
            keyPrefix: `rl:${name}`,
            points: rule.points,
            duration: rule.durationSeconds,
            rejectIfRedisNotReady: true,
            insuranceLimiter: memory,
          })
        : memory,
    );
  }
  const limiter = (name: LimitName) => limiters.get(name)!;
  return {
    async consume(name, key) {
      try {
        await limiter(name).consume(key);
        return { allowed: true };
      } catch (result) {
        if (result instanceof RateLimiterRes) {
          return { allowed: false, retryAfterSeconds: Math.max(1, Math.ceil(result.msBeforeNext / 1000)) };
        }
        throw result;
      }
    },
    async reset(name, key) {
      await limiter(name).delete(key).catch(() => undefined);
    },
  };
}
