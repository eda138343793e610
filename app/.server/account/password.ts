import { normalizeEmail } from "~/schemas/email";
import { Prisma } from "~/generated/prisma/client";
import { passwordSecret } from "../auth/legacy-hashes";
import { checkNewPassword, type PasswordProblem } from "../auth/password-policy";
import type { Context, StagedContext } from "../context";
import { invalidateUser } from "../directory/users";
import { consumeEach, refundEach, type LimitName } from "../rate-limit/limiters";
import { endAllButThisSession, readAccountSessions } from "./sessions";
import { maySubmitSensitive, type SignedIn } from "./session";

/**
 * A person's own password on the account page: a change needs the current password (checked
 * within the same limits as a sign-in with it, so the page is no second door for guessing); a
 * first password, for an account that has none, needs a recent sign-in (step-up). The new one
 * meets the same rules as everywhere (password-policy.ts). Other sessions end when asked to.
 */
export type PasswordOutcome =
  | { ok: true; otherSessionsEnded: number }
  | { ok: false; reason: "wrong_password" | "step_up" | "no_password" | "has_password" }
  | { ok: false; reason: "rate_limited"; retryAfterSeconds: number }
  | { ok: false; reason: "weak_password"; problem: PasswordProblem; limit?: number };

export interface NewPasswordInput {
  next: string;
  endOtherSessions: boolean;
}

/** Saving a password: its rules, its hash, and the other sessions it may end. */
type SavePasswordContext = StagedContext<"settings" | "passwords" | "store" | "logoutNotices" | "cache">;

/** The current password is checked within the password sign-in limits of the actor's address and the account. */
export async function changePassword(ctx: SavePasswordContext & Context<"limits">, access: SignedIn, input: NewPasswordInput & { current: string }): Promise<PasswordOutcome> {
  const stored = await ctx.db.user.findUnique({ where: { id: access.user.id }, select: { passwordHash: true, legacyPassword: true } });
  if (!stored?.passwordHash) return { ok: false, reason: "no_password" };
  const limits: Array<[LimitName, string | null]> = [
    ["passwordLoginIp", ctx.actor.ip],
    ["passwordLogin", `${access.organization.id}:${normalizeEmail(access.user.email)}`],
  ];
  const limit = await consumeEach(ctx.limits, limits);
  if (!limit.allowed) return { ok: false, reason: "rate_limited", retryAfterSeconds: limit.retryAfterSeconds };
  // An imported password is checked as a sign-in checks it (decision 085): one verification of what its old algorithm derives.
  if (!(await ctx.passwords.verify(stored.passwordHash, await passwordSecret(stored.legacyPassword, input.current)))) return { ok: false, reason: "wrong_password" };
  await refundEach(ctx.limits, limits);
  return savePassword(ctx, access, input, "account.password_changed");
}

export async function setFirstPassword(ctx: SavePasswordContext, access: SignedIn, input: NewPasswordInput): Promise<PasswordOutcome> {
  if (!maySubmitSensitive(access)) return { ok: false, reason: "step_up" };
  const stored = await ctx.db.user.findUnique({ where: { id: access.user.id }, select: { passwordHash: true } });
  if (stored?.passwordHash) return { ok: false, reason: "has_password" };
  return savePassword(ctx, access, input, "account.password_set");
}

async function savePassword(staged: SavePasswordContext, access: SignedIn, input: NewPasswordInput, eventType: "account.password_changed" | "account.password_set"): Promise<PasswordOutcome> {
  const minLength = await staged.settings.get("auth.passwordMinLength");
  const check = checkNewPassword(input.next, { minLength, email: access.user.email, organizationName: access.organization.name });
  if (!check.ok) return { ok: false, reason: "weak_password", problem: check.problem!, ...(check.limit ? { limit: check.limit } : {}) };
  const passwordHash = await staged.passwords.hash(input.next);
  const sessions = input.endOtherSessions ? await readAccountSessions(staged.store, access) : [];
  const userId = access.user.id;
  const ended = await staged.transaction(async (ctx) => {
    await ctx.db.user.update({ where: { id: userId }, data: { passwordHash, legacyPassword: Prisma.DbNull, failedLoginCount: 0, lockedUntil: null, version: { increment: 1 } } });
    const ended = input.endOtherSessions ? await endAllButThisSession(ctx, access, sessions) : 0;
    ctx.afterCommit(() => invalidateUser(ctx.cache, userId));
    ctx.audit({ eventType, organizationId: access.organization.id, targetType: "user", targetId: userId, data: { otherSessionsEnded: input.endOtherSessions } });
    return ended;
  });
  return { ok: true, otherSessionsEnded: ended };
}

export async function hasPassword(ctx: Context, access: SignedIn): Promise<boolean> {
  const row = await ctx.db.user.findUnique({ where: { id: access.user.id }, select: { passwordHash: true } });
  return Boolean(row?.passwordHash);
}
