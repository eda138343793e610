import { createHash } from "node:crypto";
import type { User as UserRow } from "~/generated/prisma/client";
import { normalizeEmail } from "~/schemas/email";
import type { SettingKey } from "~/schemas/settings";
import type { UserBlock } from "~/schemas/user";
import { emailChangeAddressKey, emailChangeLimitKey } from "../../account/email";
import { magicLinkLimitKey } from "../../sign-in/magic-link-request";
import { deviceLimitKey, passwordLimitKey } from "../../sign-in/methods/password";
import { resetLimitKey } from "../../auth/password-reset";
import { lockedFactors } from "../../auth/two-factor/factor-failures";
import type { Context } from "../../context";
import { invalidateUser } from "../../directory/users";
import { notFound } from "../../errors";
import { counterKey, rulesFromSettings, type LimitName } from "../../rate-limit/limiters";

/**
 * Everything that refuses a person now, read where each lives, and cleared there: the account's
 * lockout (the user row), the rate-limit windows of the account and of the client addresses the
 * person used recently (counters in "RateLimiterFlexible"), the locks of single device cookies
 * (the `deviceFailures` counters) and the second factors refused after too many wrong codes in a
 * row ("SecondFactorFailureCount"). Each block is named by an id the console and the Admin API
 * hand back to clear it. Decision 066.
 *
 * Reads and deletes go through the context's database (inside a write, its transaction), never
 * through the limiters' shared client: a cleared block and its audit entry commit together.
 */
type BlockLimit = NonNullable<UserBlock["limit"]>;

interface AccountLimit {
  limit: BlockLimit;
  name: LimitName;
  setting: SettingKey;
  key: (user: UserRow) => string;
}

/** The limits counted per account (its email within the organization, or the user). */
const ACCOUNT_LIMITS: AccountLimit[] = [
  { limit: "passwordLogin", name: "passwordLogin", setting: "rateLimits.passwordLogin.perAccount", key: (u) => passwordLimitKey(u.organizationId, u.email) },
  { limit: "magicLink", name: "magicLink", setting: "rateLimits.magicLink.perAccount", key: (u) => magicLinkLimitKey(u.organizationId, u.email) },
  { limit: "passwordReset", name: "passwordReset", setting: "rateLimits.passwordReset.perAccount", key: (u) => resetLimitKey(u.email) },
  { limit: "emailChange", name: "passwordReset", setting: "rateLimits.passwordReset.perAccount", key: (u) => emailChangeLimitKey(u.organizationId, u.id) },
  { limit: "twoFactor", name: "twoFactor", setting: "rateLimits.twoFactor.perUser", key: (u) => u.id },
  { limit: "emailOtpResend", name: "emailOtpResend", setting: "rateLimits.emailOtpResend.perUser", key: (u) => u.id },
];

interface AddressLimit {
  limit: BlockLimit;
  name: LimitName;
  setting: SettingKey;
  key: (ip: string) => string;
}

/** The limits counted per client address, whoever signs in from it. */
const ADDRESS_LIMITS: AddressLimit[] = [
  { limit: "passwordLogin", name: "passwordLoginIp", setting: "rateLimits.passwordLogin.perIp", key: (ip) => ip },
  { limit: "magicLink", name: "magicLinkIp", setting: "rateLimits.magicLink.perIp", key: (ip) => ip },
  { limit: "passwordReset", name: "passwordResetIp", setting: "rateLimits.passwordReset.perIp", key: (ip) => ip },
  { limit: "emailChange", name: "passwordResetIp", setting: "rateLimits.passwordReset.perIp", key: emailChangeAddressKey },
  { limit: "twoFactor", name: "twoFactorIp", setting: "rateLimits.twoFactor.perIp", key: (ip) => ip },
  { limit: "passkeyLogin", name: "passkeyLoginIp", setting: "rateLimits.passkeyLogin.perIp", key: (ip) => ip },
  { limit: "federatedLogin", name: "federatedLoginIp", setting: "rateLimits.federatedLogin.perIp", key: (ip) => ip },
];

/** At most this many recent addresses of a person are looked at. */
const MAX_ADDRESSES = 20;
/** Addresses are looked for as far back as the longest address window, and never further than this. */
const MAX_LOOKBACK_MS = 24 * 60 * 60_000;

/** A block with what clearing it deletes. */
interface Found {
  block: UserBlock;
  clear: (ctx: Context<"cache">, user: UserRow) => Promise<void>;
}

const deviceId = (nonce: string) => `device:${createHash("sha256").update(nonce).digest("hex").slice(0, 16)}`;

const deleteCounter = (key: string) => async (ctx: Context<"cache">) => {
  await ctx.db.rateLimiterFlexible.deleteMany({ where: { key } });
};

/**
 * The client addresses the person used lately, newest first: those of the audit entries about
 * them (sign-ins and their failures, second factors, account changes) and of the reset requests
 * that named their address. Magic-link requests are not audited, so an address known only from
 * them is not found.
 */
async function recentAddresses(ctx: Context, user: UserRow, since: Date): Promise<string[]> {
  const rows = await ctx.db.$queryRaw<Array<{ ip: string }>>`
    SELECT "ip" FROM (
      SELECT "ip", "createdAt" FROM "AuditEntry"
        WHERE "targetType" = 'user' AND "targetId" = ${user.id} AND "createdAt" > ${since} AND "ip" IS NOT NULL
      UNION ALL
      SELECT "ip", "createdAt" FROM "AuditEntry"
        WHERE "organizationId" = ${user.organizationId}::uuid AND "eventType" = 'auth.password_reset.requested' AND "createdAt" > ${since}
          AND "ip" IS NOT NULL AND "data"->>'email' = ${normalizeEmail(user.email)}
    ) recent
    GROUP BY "ip" ORDER BY max("createdAt") DESC LIMIT ${MAX_ADDRESSES}`;
  return rows.map((r) => r.ip);
}

async function findBlocks(ctx: Context<"settings">, user: UserRow, now: Date): Promise<Found[]> {
  const rules = rulesFromSettings(ctx.settings);
  const found: Found[] = [];

  if (user.lockedUntil && user.lockedUntil > now) {
    found.push({
      block: { id: "lockout", kind: "lockout", limit: null, setting: "auth.lockout.maxFailures", address: null, factor: null, until: user.lockedUntil.toISOString() },
      clear: async (ctx, user) => {
        await ctx.db.user.update({ where: { id: user.id }, data: { failedLoginCount: 0, lockedUntil: null, version: { increment: 1 } } });
        ctx.afterCommit(() => invalidateUser(ctx.cache, user.id));
      },
    });
  }

  const longestWindow = Math.max(...(await Promise.all(ADDRESS_LIMITS.map(async (l) => (await rules(l.name)).durationSeconds))));
  const addresses = await recentAddresses(ctx, user, new Date(now.getTime() - Math.min(longestWindow * 1000, MAX_LOOKBACK_MS)));
  const candidates = [
    ...ACCOUNT_LIMITS.map((l) => ({ kind: "account_limit" as const, limit: l.limit, name: l.name, setting: l.setting, address: null, key: counterKey(l.name, l.key(user)) })),
    ...addresses.flatMap((ip) => ADDRESS_LIMITS.map((l) => ({ kind: "address_limit" as const, limit: l.limit, name: l.name, setting: l.setting, address: ip, key: counterKey(l.name, l.key(ip)) }))),
  ];
  const devicePrefix = counterKey("deviceFailures", deviceLimitKey(user.id, ""));
  const counters = await ctx.db.rateLimiterFlexible.findMany({
    where: { OR: [{ key: { in: candidates.map((c) => c.key) } }, { key: { startsWith: devicePrefix } }], expire: { gt: now } },
  });
  const byKey = new Map(counters.map((c) => [c.key, c]));

  for (const candidate of candidates) {
    const counter = byKey.get(candidate.key);
    if (!counter?.expire || counter.points < (await rules(candidate.name)).points) continue;
    found.push({
      block: {
        id: candidate.address === null ? `limit:${candidate.limit}` : `limit:${candidate.limit}:${candidate.address}`,
        kind: candidate.kind,
        limit: candidate.limit,
        setting: candidate.setting,
        address: candidate.address,
        factor: null,
        until: counter.expire.toISOString(),
      },
      clear: deleteCounter(candidate.key),
    });
  }

  const devicePoints = (await rules("deviceFailures")).points;
  for (const counter of counters) {
    if (!counter.key.startsWith(devicePrefix) || !counter.expire || counter.points < devicePoints) continue;
    found.push({
      block: { id: deviceId(counter.key.slice(devicePrefix.length)), kind: "device", limit: null, setting: "auth.lockout.maxFailures", address: null, factor: null, until: counter.expire.toISOString() },
      clear: deleteCounter(counter.key),
    });
  }

  const maxFailures = await ctx.settings.get("auth.twoFactor.maxConsecutiveFailures");
  for (const locked of await lockedFactors(ctx.db, maxFailures, user.id)) {
    found.push({
      block: { id: `factor:${locked.factor}`, kind: "factor", limit: null, setting: "auth.twoFactor.maxConsecutiveFailures", address: null, factor: locked.factor, until: null },
      clear: async (ctx, user) => {
        await ctx.db.secondFactorFailureCount.deleteMany({ where: { userId: user.id, factor: locked.factor } });
      },
    });
  }
  return found;
}

/** What refuses the user now, each block with when it ends. */
export async function describeBlocks(ctx: Context<"settings">, user: UserRow, now = new Date()): Promise<UserBlock[]> {
  return (await findBlocks(ctx, user, now)).map((f) => f.block);
}

/**
 * Clears one block of the user, named by its id, in the caller's write (which audits it); a block
 * that has ended, was cleared or never held the user is a 404. Returns the block as it was.
 */
export async function clearBlock(ctx: Context<"settings" | "cache">, user: UserRow, blockId: string, now = new Date()): Promise<UserBlock> {
  const found = (await findBlocks(ctx, user, now)).find((f) => f.block.id === blockId);
  if (!found) throw notFound("block");
  await found.clear(ctx, user);
  return found.block;
}
