import type { Organization } from "~/generated/prisma/client";
import { EmailSchema } from "~/schemas/email";
import { isRepresentableText } from "~/schemas/text";
import { EMAIL_CHANGE_TTL_MINUTES, emailChangeUrl } from "../auth/email-links";
import type { Context, JobServiceContext, StagedContext } from "../context";
import { invalidateUser } from "../directory/users";
import type { JobContext, JobPayloads } from "../jobs/queue";
import { sendBrandedEmail } from "../mail/send";
import { accountPageUrl } from "../oidc/storage/account-client";
import { consumeEach } from "../rate-limit/limiters";
import { maySubmitSensitive, type SignedIn } from "./session";

/**
 * A person's own email address (decision 042): the account page asks for the new
 * address after a recent sign-in; a single-use link goes to the new address and a notice to the
 * current one; the address changes, verified, only when the link is used, in any browser. Until
 * then the account keeps its address, and a new request ends the earlier link.
 *
 * Whether another account of the organization already has the address is never said on the page
 * (the answer is the same either way, so the page cannot be used to look up members); no link is
 * mailed then, and the confirmation checks again, since the address may be taken meanwhile.
 */

export type EmailChangeProblem = "invalid" | "unstorable" | "same";
export type EmailChangeRequest =
  | { ok: true }
  | { ok: false; reason: "step_up" }
  | { ok: false; reason: "rate_limited"; retryAfterSeconds: number }
  | { ok: false; reason: "field"; problem: EmailChangeProblem };

/** The rule of reset mails (mails to an address per hour), on counters of their own: per account and per client address. */
export const emailChangeLimitKey = (organizationId: string, userId: string) => `email-change:${organizationId}:${userId}`;
export const emailChangeAddressKey = (ip: string) => `email-change:${ip}`;

export async function requestEmailChange(
  staged: StagedContext<"limits" | "tokens" | "logger">,
  access: SignedIn,
  input: { newEmail: unknown; language: string },
): Promise<EmailChangeRequest> {
  if (typeof input.newEmail !== "string" || !isRepresentableText(input.newEmail)) return { ok: false, reason: "field", problem: "unstorable" };
  const parsed = EmailSchema.safeParse(input.newEmail);
  if (!parsed.success) return { ok: false, reason: "field", problem: "invalid" };
  const newEmail = parsed.data;
  const { user, organization } = access;
  if (newEmail === user.email.toLowerCase()) return { ok: false, reason: "field", problem: "same" };
  if (!maySubmitSensitive(access)) return { ok: false, reason: "step_up" };
  const { ip } = staged.actor;
  const limit = await consumeEach(staged.limits, [
    ["passwordReset", emailChangeLimitKey(organization.id, user.id)],
    ["passwordResetIp", ip === null ? null : emailChangeAddressKey(ip)],
  ]);
  if (!limit.allowed) return { ok: false, reason: "rate_limited", retryAfterSeconds: limit.retryAfterSeconds };
  const taken = await staged.db.user.findUnique({ where: { organizationId_email: { organizationId: organization.id, email: newEmail } }, select: { id: true } });
  await staged.transaction(async (ctx) => {
    const now = new Date();
    await ctx.db.emailChangeToken.updateMany({ where: { userId: user.id, consumedAt: null }, data: { consumedAt: now } });
    const payload = { organizationId: organization.id, userId: user.id, newEmail, language: input.language };
    if (!taken) {
      const jobId = await ctx.enqueue("email-change", payload);
      if (jobId) {
        await ctx.db.emailChangeToken.create({
          data: {
            jobId,
            tokenHash: ctx.tokens.hash(ctx.tokens.derive("email-change", jobId)),
            organizationId: organization.id,
            userId: user.id,
            newEmail,
            expiresAt: new Date(now.getTime() + EMAIL_CHANGE_TTL_MINUTES * 60_000),
          },
        });
      } else ctx.logger.warn({ organizationId: organization.id }, "email change dropped: queue full");
    }
    await ctx.enqueue("email-change-notice", payload);
    ctx.audit({ eventType: "account.email_change_requested", organizationId: organization.id, targetType: "user", targetId: user.id, data: { newEmail, ...(taken ? { addressTaken: true } : {}) } });
  });
  return { ok: true };
}

/** The address a change is waiting on, while its link works: the page says where to look. */
export async function pendingEmailChange(ctx: Context, userId: string): Promise<string | null> {
  const row = await ctx.db.emailChangeToken.findFirst({
    where: { userId, consumedAt: null, expiresAt: { gt: new Date() } },
    orderBy: { createdAt: "desc" },
    select: { newEmail: true },
  });
  return row?.newEmail ?? null;
}

/** Mails the link whose token the request stored; a link ended meanwhile (a newer request, used) is not sent. */
export async function sendEmailChangeJob(ctx: JobServiceContext<"mailer" | "config" | "tokens">, data: JobPayloads["email-change"], job: JobContext): Promise<void> {
  const row = await ctx.db.emailChangeToken.findUnique({ where: { jobId: job.id }, include: { organization: true, user: { select: { status: true, locale: true } } } });
  if (!row || row.consumedAt || row.expiresAt <= new Date() || row.user.status !== "active" || row.organization.status !== "active") return;
  const language = row.user.locale ?? data.language;
  await sendBrandedEmail(ctx.mailer, {
    to: row.newEmail,
    organization: row.organization,
    accountUrl: accountPageUrl(ctx.config.baseUrl, row.organization.slug),
    language,
    template: {
      kind: "email-change",
      link: emailChangeUrl(ctx.config.baseUrl, { organizationSlug: row.organization.slug, token: ctx.tokens.derive("email-change", job.id), language }),
      newEmail: row.newEmail,
      expiresMinutes: Math.max(1, Math.round((row.expiresAt.getTime() - row.createdAt.getTime()) / 60_000)),
    },
  });
}

/** Tells the current address; sent whatever becomes of the change, to the address the account had then or has now. */
export async function sendEmailChangeNoticeJob(ctx: JobServiceContext<"mailer" | "config">, data: JobPayloads["email-change-notice"]): Promise<void> {
  const user = await ctx.db.user.findUnique({ where: { id: data.userId }, select: { email: true, locale: true, status: true, organization: true } });
  if (!user || user.status !== "active" || user.organization.status !== "active" || user.email.toLowerCase() === data.newEmail) return;
  await sendBrandedEmail(ctx.mailer, {
    to: user.email,
    organization: user.organization,
    accountUrl: accountPageUrl(ctx.config.baseUrl, user.organization.slug),
    language: user.locale ?? data.language,
    template: { kind: "email-change-notice", newEmail: data.newEmail },
  });
}

/**
 * What a confirmation link is, for the page that opens it: `unknown` for a made-up token or one
 * of another organization; `used` and `expired` are told apart for the holder of the token only.
 */
export interface FoundEmailChangeLink {
  id: string;
  userId: string;
  newEmail: string;
  organization: Organization;
}
export type EmailChangeLink = { status: "unknown" } | ({ status: "usable" | "used" | "expired" } & FoundEmailChangeLink);

export async function findEmailChangeLink(ctx: Context<"tokens">, organizationSlug: string, token: string): Promise<EmailChangeLink> {
  if (token.length < 20 || token.length > 100) return { status: "unknown" };
  const row = await ctx.db.emailChangeToken.findUnique({ where: { tokenHash: ctx.tokens.hash(token) }, include: { organization: true } });
  if (!row || row.organization.slug !== organizationSlug.toLowerCase() || row.organization.status !== "active") return { status: "unknown" };
  const status = row.consumedAt ? "used" : row.expiresAt <= new Date() ? "expired" : "usable";
  return { status, id: row.id, userId: row.userId, newEmail: row.newEmail, organization: row.organization };
}

export type EmailChangeOutcome = { ok: true; email: string } | { ok: false; reason: "invalid_token" | "taken" };

/**
 * The change itself: the used link, the new address (verified: the link proved it receives mail)
 * and the `account.email_changed` entry commit together. Sessions stay: the person is the same.
 */
export async function confirmEmailChange(staged: StagedContext<"cache">, link: FoundEmailChangeLink): Promise<EmailChangeOutcome> {
  const user = await staged.db.user.findUnique({ where: { id: link.userId }, select: { email: true, status: true } });
  if (!user || user.status !== "active") return { ok: false, reason: "invalid_token" };
  return staged.transaction(async (ctx): Promise<EmailChangeOutcome> => {
    const now = new Date();
    const consumed = await ctx.db.emailChangeToken.updateMany({ where: { id: link.id, consumedAt: null, expiresAt: { gt: now } }, data: { consumedAt: now } });
    if (consumed.count !== 1) return { ok: false, reason: "invalid_token" };
    const taken = await ctx.db.user.findFirst({ where: { organizationId: link.organization.id, email: link.newEmail, id: { not: link.userId } }, select: { id: true } });
    if (taken) return { ok: false, reason: "taken" };
    await ctx.db.user.update({ where: { id: link.userId }, data: { email: link.newEmail, emailVerified: true, version: { increment: 1 } } });
    ctx.afterCommit(() => invalidateUser(ctx.cache, link.userId));
    ctx.audit({ eventType: "account.email_changed", organizationId: link.organization.id, targetType: "user", targetId: link.userId, data: { previousEmail: user.email, newEmail: link.newEmail } });
    return { ok: true, email: link.newEmail };
  });
}
