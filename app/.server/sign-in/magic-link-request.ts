import { normalizeEmail } from "~/schemas/email";
import { magicLinkUrl } from "../auth/email-links";
import type { JobContext, JobPayloads } from "../jobs/queue";
import { sendBrandedEmail } from "../mail/send";
import { accountPageUrl } from "../oidc/storage/account-client";
import type { Services } from "../services";
import { systemActor } from "../auth/actors";
import { unitOfWork } from "./door";
import { startPairing } from "./magic-link-pairing";
import { consumeEach } from "../rate-limit/limiters";

/**
 * Asking for a magic link (spec "Magic link rules"): the request only enqueues tenant-bound work;
 * the job looks the account up, mints the link and mails it; absent or ineligible accounts end
 * there, silently. Signing in with the link is the method's (methods/magic-link.ts). Both are
 * entries of their own (a route, a job), handed the services like the door.
 */
export type MagicLinkRequestOutcome =
  /** `pairingCode`: the number the asking page shows, for a link opened on another device (decision 033). */
  | { status: "accepted"; pairingCode: string }
  | { status: "rate_limited"; retryAfterSeconds: number };

/**
 * The request looks nothing up and writes nothing (so that its answer tells nobody whether an
 * address has an account), so its job has no write to commit with: it goes straight to the
 * queue with `services.jobs.enqueue`. An outbox row (`ctx.enqueue`) would
 * only add a transaction and a hand-over to the one insert, and no audit entry belongs here.
 */
/** The per-account limit's key: the address as typed (normalized), within the organization. */
export const magicLinkLimitKey = (organizationId: string, email: string) => `${organizationId}:${normalizeEmail(email)}`;

export async function requestMagicLink(services: Services, input: JobPayloads["magic-link"]): Promise<MagicLinkRequestOutcome> {
  const email = normalizeEmail(input.email);
  const limit = await consumeEach(services.limits, [
    ["magicLinkIp", input.ip],
    ["magicLink", magicLinkLimitKey(input.organizationId, email)],
  ]);
  if (!limit.allowed) return { status: "rate_limited", retryAfterSeconds: limit.retryAfterSeconds };
  const jobId = await services.jobs.enqueue("magic-link", { ...input, email });
  if (!jobId) services.logger.warn({ organizationId: input.organizationId }, "magic link request dropped: queue full");
  // Shown whether or not the address has an account: it tells nothing about the account.
  const ttlSeconds = (await services.settings.get("auth.magicLinkTtlMinutes")) * 60;
  const pairingCode = input.interactionUid ? await startPairing(services.store, input.interactionUid, ttlSeconds) : "";
  return { status: "accepted", pairingCode };
}

/**
 * Mints the link and mails it. The token row and its `auth.magic_link.sent` entry commit together,
 * once per job (the row is keyed by the job), before the mail goes out: a retry finds the row and
 * sends the same link again, so one job never has two active links nor two entries.
 */
export async function sendMagicLinkJob(services: Services, data: JobPayloads["magic-link"], job: JobContext): Promise<void> {
  const user = await services.db.prisma.user.findUnique({
    where: { organizationId_email: { organizationId: data.organizationId, email: data.email } },
    include: { organization: true },
  });
  if (!user || user.status !== "active" || user.organization.status !== "active" || !data.interactionUid) return;
  const interactionUid = data.interactionUid;

  const token = services.tokens.derive("magic-link", job.id);
  const ttlMinutes = await services.settings.get("auth.magicLinkTtlMinutes");
  await unitOfWork(services, { ip: data.ip, requestId: null }).transaction(systemActor(data.ip), async (ctx) => {
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
  const link = magicLinkUrl(services.config.baseUrl, { interactionUid, organizationSlug: user.organization.slug, token });
  await sendBrandedEmail(services.mailer, {
    to: user.email,
    organization: user.organization,
    accountUrl: accountPageUrl(services.config.baseUrl, user.organization.slug),
    language: user.locale ?? data.language,
    template: { kind: "magic-link", link, expiresMinutes: ttlMinutes },
  });
}
