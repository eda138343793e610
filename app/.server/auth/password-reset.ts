import { normalizeEmail } from "~/schemas/email";
import { inTransaction } from "../context";
import { invalidateUser } from "../directory/users";
import type { JobContext, JobPayloads } from "../jobs/queue";
import { sendBrandedEmail } from "../mail/send";
import { endBrowserSessions } from "../oidc/sessions";
import type { Services } from "../services";
import { anonymousActor, systemActor, userActor, type RequestMeta } from "./actors";
import { passwordResetUrl } from "./email-links";
import { checkNewPassword, type PasswordProblem } from "./password-policy";
import { consumeEach } from "../rate-limit/limiters";

/**
 * Password reset (spec "Password reset rules"): the request returns at once after enqueueing;
 * the job does the lookup, the token and the mail. The token is owned by its job, so a retry
 * (for example after an ambiguous SMTP outcome) sends the same link and never a second one.
 */

export type ResetRequestOutcome = { status: "accepted" } | { status: "rate_limited"; retryAfterSeconds: number };

/**
 * The request's one write is its `auth.password_reset.requested` entry; its job is an outbox row
 * of the same transaction (`ctx.enqueue`), so an audited request always has its job and a job
 * never runs for a request that was not recorded.
 */
export async function requestPasswordReset(services: Services, input: JobPayloads["password-reset"]): Promise<ResetRequestOutcome> {
  const email = normalizeEmail(input.email);
  const limit = await consumeEach(services.limits, [
    ["passwordResetIp", input.ip],
    ["passwordReset", email],
  ]);
  if (!limit.allowed) return { status: "rate_limited", retryAfterSeconds: limit.retryAfterSeconds };
  await inTransaction(services, anonymousActor({ ip: input.ip, requestId: null }), async (ctx) => {
    const jobId = await ctx.enqueue("password-reset", { ...input, email });
    if (!jobId) ctx.logger.warn({ organizationId: input.organizationId }, "password reset request dropped: queue full");
    ctx.audit({ eventType: "auth.password_reset.requested", organizationId: input.organizationId, data: { email } });
  });
  return { status: "accepted" };
}

/** The lookup, the token (keyed by the job: one per job, whatever the retries) and then the mail. */
export async function sendPasswordResetJob(services: Services, data: JobPayloads["password-reset"], job: JobContext): Promise<void> {
  const user = await services.db.prisma.user.findUnique({
    where: { organizationId_email: { organizationId: data.organizationId, email: data.email } },
    include: { organization: true },
  });
  if (!user || user.status !== "active" || user.organization.status !== "active" || !data.interactionUid) return;
  const interactionUid = data.interactionUid;
  const token = services.tokens.derive("password-reset", job.id);
  const ttlMinutes = await services.settings.get("auth.passwordResetTtlMinutes");
  await inTransaction(services, systemActor(data.ip), async (ctx) => {
    await ctx.db.passwordResetToken.upsert({
      where: { jobId: job.id },
      create: {
        jobId: job.id,
        tokenHash: ctx.tokens.hash(token),
        organizationId: user.organizationId,
        userId: user.id,
        interactionUid,
        expiresAt: new Date(Date.now() + ttlMinutes * 60_000),
      },
      update: {},
    });
  });
  await sendBrandedEmail(services.mailer, {
    to: user.email,
    organization: user.organization,
    language: user.locale ?? data.language,
    template: {
      kind: "password-reset",
      link: passwordResetUrl(services.config.baseUrl, { interactionUid, token }),
      expiresMinutes: ttlMinutes,
    },
  });
}

/** A usable reset token of this organization, or null (unknown, used, expired, other tenant). */
export async function findUsableResetToken(services: Services, organizationId: string, token: string) {
  if (token.length < 20 || token.length > 100) return null;
  const row = await services.db.prisma.passwordResetToken.findUnique({
    where: { tokenHash: services.tokens.hash(token) },
    include: { user: { select: { email: true, status: true } } },
  });
  if (!row || row.organizationId !== organizationId || row.consumedAt || row.expiresAt <= new Date() || row.user.status !== "active") return null;
  return row;
}

export type ResetOutcome = { ok: true; userId: string } | { ok: false; reason: "invalid_token" } | { ok: false; reason: "weak_password"; problem: PasswordProblem; limit?: number };

/**
 * Sets the new password (hashed before the transaction). The used link and the user's other
 * links, the password, the end of the user's grants and tokens and the
 * `auth.password_reset.completed` entry commit together; the browser sessions in the store end
 * after the commit. The reset does not sign in: the person signs in with the new password.
 */
export async function completePasswordReset(
  services: Services,
  input: { organizationId: string; token: string; newPassword: string; meta: RequestMeta },
): Promise<ResetOutcome> {
  const row = await findUsableResetToken(services, input.organizationId, input.token);
  if (!row) return { ok: false, reason: "invalid_token" };
  const check = checkNewPassword(input.newPassword, { minLength: await services.settings.get("auth.passwordMinLength"), email: row.user.email });
  if (!check.ok) return { ok: false, reason: "weak_password", problem: check.problem!, ...(check.limit ? { limit: check.limit } : {}) };
  const passwordHash = await services.passwords.hash(input.newPassword);
  const { userId } = row;
  const done = await inTransaction(services, userActor(userId, input.meta), async (ctx) => {
    const now = new Date();
    const consumed = await ctx.db.passwordResetToken.updateMany({ where: { id: row.id, consumedAt: null, expiresAt: { gt: now } }, data: { consumedAt: now } });
    if (consumed.count !== 1) return false;
    await ctx.db.user.update({ where: { id: userId }, data: { passwordHash, failedLoginCount: 0, lockedUntil: null, version: { increment: 1 } } });
    // Other reset links of this user die with this one.
    await ctx.db.passwordResetToken.updateMany({ where: { userId, consumedAt: null }, data: { consumedAt: now } });
    // Refresh tokens stop working with the commit; browser sessions live in the store.
    await ctx.db.oidcPayload.deleteMany({ where: { organizationId: input.organizationId, accountId: userId } });
    ctx.afterCommit(() => endBrowserSessions(ctx.store, input.organizationId, userId));
    ctx.afterCommit(() => invalidateUser(ctx.cache, userId));
    ctx.audit({ eventType: "auth.password_reset.completed", organizationId: input.organizationId, targetType: "user", targetId: userId, data: {} });
    return true;
  });
  return done ? { ok: true, userId } : { ok: false, reason: "invalid_token" };
}
