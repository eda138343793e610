import { endUserSessions } from "../oidc/sessions";
import { normalizeEmail } from "~/schemas/email";
import type { JobContext, JobPayloads } from "../jobs/queue";
import { sendBrandedEmail } from "../mail/send";
import type { Services } from "../services";
import { passwordResetUrl } from "./email-links";
import { checkNewPassword, type PasswordProblem } from "./password-policy";

/**
 * Password reset (spec "Password reset rules"): the request returns at once after enqueueing;
 * the job does the lookup, the token and the mail. The token is owned by its job, so a retry
 * (for example after an ambiguous SMTP outcome) sends the same link and never a second one.
 */
export const DEFAULT_MIN_PASSWORD_LENGTH = 8;

export type ResetRequestOutcome = { status: "accepted" } | { status: "rate_limited"; retryAfterSeconds: number };

export async function requestPasswordReset(services: Services, input: JobPayloads["password-reset"]): Promise<ResetRequestOutcome> {
  const email = normalizeEmail(input.email);
  const limit = await services.limits.consume("passwordReset", email);
  if (!limit.allowed) return { status: "rate_limited", retryAfterSeconds: limit.retryAfterSeconds };
  const jobId = await services.jobs.enqueue("password-reset", { ...input, email });
  if (!jobId) services.logger.warn({ organizationId: input.organizationId }, "password reset request dropped: queue full");
  await services.audit.record({
    eventType: "auth.password_reset.requested",
    organizationId: input.organizationId,
    actorType: "anonymous",
    ip: input.ip,
    data: { email },
  });
  return { status: "accepted" };
}

export async function sendPasswordResetJob(services: Services, data: JobPayloads["password-reset"], job: JobContext): Promise<void> {
  const { prisma } = services.db;
  const user = await prisma.user.findUnique({
    where: { organizationId_email: { organizationId: data.organizationId, email: data.email } },
    include: { organization: true },
  });
  if (!user || user.status !== "active" || user.organization.status !== "active" || !data.interactionUid) return;
  const token = services.tokens.derive("password-reset", job.id);
  const ttlMinutes = await services.settings.get("auth.passwordResetTtlMinutes");
  await prisma.passwordResetToken.upsert({
    where: { jobId: job.id },
    create: {
      jobId: job.id,
      tokenHash: services.tokens.hash(token),
      organizationId: user.organizationId,
      userId: user.id,
      interactionUid: data.interactionUid,
      expiresAt: new Date(Date.now() + ttlMinutes * 60_000),
    },
    update: {},
  });
  await sendBrandedEmail(services.mailer, {
    to: user.email,
    organization: user.organization,
    language: user.locale ?? data.language,
    template: {
      kind: "password-reset",
      link: passwordResetUrl(services.config.baseUrl, { interactionUid: data.interactionUid, token }),
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

export async function completePasswordReset(
  services: Services,
  input: { organizationId: string; token: string; newPassword: string; ip: string | null; requestId: string | null },
): Promise<ResetOutcome> {
  const row = await findUsableResetToken(services, input.organizationId, input.token);
  if (!row) return { ok: false, reason: "invalid_token" };
  const check = checkNewPassword(input.newPassword, { minLength: await services.settings.get("auth.passwordMinLength"), email: row.user.email });
  if (!check.ok) return { ok: false, reason: "weak_password", problem: check.problem!, ...(check.limit ? { limit: check.limit } : {}) };
  const passwordHash = await services.passwords.hash(input.newPassword);
  const { prisma } = services.db;
  const done = await prisma.$transaction(async (tx) => {
    const consumed = await tx.passwordResetToken.updateMany({
      where: { id: row.id, consumedAt: null, expiresAt: { gt: new Date() } },
      data: { consumedAt: new Date() },
    });
    if (consumed.count !== 1) return false;
    await tx.user.update({
      where: { id: row.userId },
      data: { passwordHash, failedLoginCount: 0, lockedUntil: null, version: { increment: 1 } },
    });
    // Other reset links of this user die with this one.
    await tx.passwordResetToken.updateMany({ where: { userId: row.userId, consumedAt: null }, data: { consumedAt: new Date() } });
    return true;
  });
  if (!done) return { ok: false, reason: "invalid_token" };
  await endUserSessions(prisma, services.store, input.organizationId, row.userId);
  await services.audit.record({
    eventType: "auth.password_reset.completed",
    organizationId: input.organizationId,
    actorType: "user",
    actorId: row.userId,
    targetType: "user",
    targetId: row.userId,
    ip: input.ip,
    requestId: input.requestId,
    data: {},
  });
  return { ok: true, userId: row.userId };
}
