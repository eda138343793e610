import type { JobContext, JobPayloads } from "../jobs/queue";
import { sendBrandedEmail } from "../mail/send";
import { accountPageUrl } from "../oidc/storage/account-client";
import type { Context } from "../context";

/**
 * The mail of an email code (methods/email-code.ts issues the code and enqueues this job in one
 * transaction). The job table hands it its context, as it does every job.
 */
/** Mails a code (the job writes nothing: the code row was committed with the job). */
export async function sendEmailOtpJob(ctx: Context<"mailer" | "config" | "otp">, data: JobPayloads["email-otp"], _job: JobContext): Promise<void> {
  const row = await ctx.db.emailOtpCode.findUnique({ where: { id: data.codeId }, include: { user: { include: { organization: true } } } });
  if (!row || row.usedAt || row.expiresAt <= new Date() || row.user.status !== "active") return;
  await sendBrandedEmail(ctx.mailer, {
    to: row.user.email,
    organization: row.user.organization,
    accountUrl: accountPageUrl(ctx.config.baseUrl, row.user.organization.slug),
    language: row.user.locale ?? data.language,
    template: { kind: "email-otp", code: ctx.otp.codeFor(row.id), expiresMinutes: Math.max(1, Math.round((row.expiresAt.getTime() - row.createdAt.getTime()) / 60_000)) },
  });
}
