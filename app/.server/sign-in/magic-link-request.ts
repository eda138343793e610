import { normalizeEmail } from "~/schemas/email";
import { magicLinkUrl } from "../auth/email-links";
import type { JobContext, JobPayloads } from "../jobs/queue";
import { sendBrandedEmail } from "../mail/send";
import { accountPageUrl } from "../oidc/storage/account-client";
import type { Context, JobServiceContext } from "../context";
import type { JobQueue } from "../jobs/queue";
import { systemActor } from "../auth/actors";
import { startPairing } from "./magic-link-pairing";
import { consumeEach } from "../rate-limit/limiters";

/**
 * Asking for a magic link (spec "Magic link rules"): the request only enqueues tenant-bound work;
 * the job looks the account up, mints the link and mails it; absent or ineligible accounts end
 * there, silently. Signing in with the link is the method's (methods/magic-link.ts). The route
 * hands the request its context and the queue; the job table hands the job its own.
 */
export type MagicLinkRequestOutcome =
  /** `pairingCode`: the number the asking page shows, for a link opened on another device (decision 033). */
  | { status: "accepted"; pairingCode: string }
  | { status: "rate_limited"; retryAfterSeconds: number };

/**
 * The request looks nothing up and writes nothing (so that its answer tells nobody whether an
 * address has an account), so its job has no write to commit with: it goes straight to the
 * queue (`jobs.enqueue`, which the route hands beside the context). An outbox row (`ctx.enqueue`)
 * would only add a transaction and a hand-over to the one insert, and no audit entry belongs here.
 */
export type MagicLinkRequestContext = Context<"limits" | "logger" | "settings" | "store"> & { jobs: Pick<JobQueue, "enqueue"> };

/** The per-account limit's key: the address as typed (normalized), within the organization. */
export const magicLinkLimitKey = (organizationId: string, email: string) => `${organizationId}:${normalizeEmail(email)}`;

export async function requestMagicLink(ctx: MagicLinkRequestContext, input: JobPayloads["magic-link"]): Promise<MagicLinkRequestOutcome> {
  const email = normalizeEmail(input.email);
  const limit = await consumeEach(ctx.limits, [
    ["magicLinkIp", input.ip],
    ["magicLink", magicLinkLimitKey(input.organizationId, email)],
  ]);
  if (!limit.allowed) return { status: "rate_limited", retryAfterSeconds: limit.retryAfterSeconds };
  const jobId = await ctx.jobs.enqueue("magic-link", { ...input, email });
  if (!jobId) ctx.logger.warn({ organizationId: input.organizationId }, "magic link request dropped: queue full");
  // Shown whether or not the address has an account: it tells nothing about the account.
  const ttlSeconds = (await ctx.settings.get("auth.magicLinkTtlMinutes")) * 60;
  const pairingCode = input.interactionUid ? await startPairing(ctx.store, input.interactionUid, ttlSeconds) : "";
  return { status: "accepted", pairingCode };
}

/**
 * Mints the link and mails it. The token row and its `auth.magic_link.sent` entry commit together,
 * once per job (the row is keyed by the job), before the mail goes out: a retry finds the row and
 * sends the same link again, so one job never has two active links nor two entries.
 */
export async function sendMagicLinkJob(staged: JobServiceContext<"tokens" | "settings" | "mailer" | "config">, data: JobPayloads["magic-link"], job: JobContext): Promise<void> {
  const user = await staged.db.user.findUnique({
    where: { organizationId_email: { organizationId: data.organizationId, email: data.email } },
    include: { organization: true },
  });
  if (!user || user.status !== "active" || user.organization.status !== "active" || !data.interactionUid) return;
  const interactionUid = data.interactionUid;

  const token = staged.tokens.derive("magic-link", job.id);
  const ttlMinutes = await staged.settings.get("auth.magicLinkTtlMinutes");
  await staged.transaction(systemActor(data.ip), async (ctx) => {
    if (await ctx.db.magicLinkToken.findUnique({ where: { jobId: job.id }, select: { id: true } })) return;
    await ctx.db.magicLinkToken.create({
      data: {
        jobId: job.id,
        tokenHash: ctx.tokens.hash(token),
        organizationId: user.organizationId,
        userId: user.id,
        interactionUid,
        clientId: data.clientId,
        expiresAt: new Date(Date.now() + ttlMinutes * 60_000),
      },
    });
    ctx.audit({ eventType: "auth.magic_link.sent", organizationId: user.organizationId, targetType: "user", targetId: user.id, data: { email: user.email } });
  });
  const link = magicLinkUrl(staged.config.baseUrl, { interactionUid, organizationSlug: user.organization.slug, token });
  await sendBrandedEmail(staged.mailer, {
    to: user.email,
    organization: user.organization,
    accountUrl: accountPageUrl(staged.config.baseUrl, user.organization.slug),
    language: user.locale ?? data.language,
    template: { kind: "magic-link", link, expiresMinutes: ttlMinutes },
  });
}
