import type { JobContext, JobPayloads } from "../jobs/queue";
import { sendBrandedEmail } from "../mail/send";
import { accountPageUrl } from "../oidc/storage/account-client";
import type { Services } from "../services";

/**
 * The mail of an email code (methods/email-code.ts issues the code and enqueues this job in one
 * transaction). A job is an entry of its own, handed the services like the door.
 */
/** Mails a code (the job writes nothing: the code row was committed with the job). */
export async function sendEmailOtpJob(services: Services, data: JobPayloads["email-otp"], _job: JobContext): Promise<void> {
  const row = await services.db.prisma.emailOtpCode.findUnique({ where: { id: data.codeId }, include: { user: { include: { organization: true } } } });
  if (!row || row.usedAt || row.expiresAt <= new Date() || row.user.status !== "active") return;
  await sendBrandedEmail(services.mailer, {
    to: row.user.email,
    organization: row.user.organization,
    accountUrl: accountPageUrl(services.config.baseUrl, row.user.organization.slug),
    language: row.user.locale ?? data.language,
    template: { kind: "email-otp", code: services.otp.codeFor(row.id), expiresMinutes: Math.max(1, Math.round((row.expiresAt.getTime() - row.createdAt.getTime()) / 60_000)) },
  });
}
