import { effectiveLoginMethods } from "./login-methods";
import { normalizeEmail } from "~/schemas/email";
import { magicLinkUrl } from "./email-links";
import { getClientRecord } from "../directory/clients";
import { getOrganizationBySlug } from "../directory/organizations";
import type { JobContext, JobPayloads } from "../jobs/queue";
import { sendBrandedEmail } from "../mail/send";
import type { Services } from "../services";

/**
 * Magic links (spec "Magic link rules"). The request only enqueues tenant-bound work; the job
 * looks the account up, mints the link and mails it; absent or ineligible accounts end there,
 * silently. At the callback the organization and interaction in the link are untrusted: they
 * must equal what was stored, and a mismatch neither tells nor consumes anything.
 */
export type MagicLinkRequestOutcome = { status: "accepted" } | { status: "rate_limited"; retryAfterSeconds: number };

export async function requestMagicLink(services: Services, input: JobPayloads["magic-link"]): Promise<MagicLinkRequestOutcome> {
  const email = normalizeEmail(input.email);
  const limit = await services.limits.consume("magicLink", `${input.organizationId}:${email}`);
  if (!limit.allowed) return { status: "rate_limited", retryAfterSeconds: limit.retryAfterSeconds };
  const jobId = await services.jobs.enqueue("magic-link", { ...input, email });
  if (!jobId) services.logger.warn({ organizationId: input.organizationId }, "magic link request dropped: queue full");
  return { status: "accepted" };
}

export async function sendMagicLinkJob(services: Services, data: JobPayloads["magic-link"], job: JobContext): Promise<void> {
  const { prisma } = services.db;
  const user = await prisma.user.findUnique({
    where: { organizationId_email: { organizationId: data.organizationId, email: data.email } },
    include: { organization: true },
  });
  if (!user || user.status !== "active" || user.organization.status !== "active" || !data.interactionUid) return;

  const token = services.tokens.derive("magic-link", job.id);
  const ttlMinutes = await services.settings.get("auth.magicLinkTtlMinutes");
  // Keyed by the job: a retry finds the same row and sends the same link again.
  await prisma.magicLinkToken.upsert({
    where: { jobId: job.id },
    create: {
      jobId: job.id,
      tokenHash: services.tokens.hash(token),
      organizationId: user.organizationId,
      userId: user.id,
      interactionUid: data.interactionUid,
      clientId: data.clientId,
      expiresAt: new Date(Date.now() + ttlMinutes * 60_000),
    },
    update: {},
  });
  const link = magicLinkUrl(services.config.baseUrl, { interactionUid: data.interactionUid, organizationSlug: user.organization.slug, token });
  await sendBrandedEmail(services.mailer, {
    to: user.email,
    organization: user.organization,
    language: user.locale ?? data.language,
    template: { kind: "magic-link", link, expiresMinutes: ttlMinutes },
  });
  await services.audit.record({
    eventType: "auth.magic_link.sent",
    organizationId: user.organizationId,
    actorType: "system",
    targetType: "user",
    targetId: user.id,
    ip: data.ip,
    data: { email: user.email },
  });
}

export type MagicLinkConsumption =
  | { ok: true; userId: string; organizationId: string; clientId: string | null }
  | { ok: false; reason: "invalid" | "method_disabled" };

/**
 * Consumes a link. Organization slug and interaction uid come from the request and are
 * compared with the stored ones before anything changes; the consuming UPDATE commits on its
 * own, so the link stays used even if the sign-in cannot continue afterwards.
 */
export async function consumeMagicLink(
  services: Services,
  input: { token: string; organizationSlug: string; interactionUid: string; ip: string | null; requestId: string | null },
): Promise<MagicLinkConsumption> {
  const { prisma } = services.db;
  const invalid = { ok: false, reason: "invalid" } as const;
  if (input.token.length < 20 || input.token.length > 100) return invalid;
  const row = await prisma.magicLinkToken.findUnique({ where: { tokenHash: services.tokens.hash(input.token) } });
  if (!row) return invalid;
  const organization = await getOrganizationBySlug(prisma, services.cache, input.organizationSlug);
  if (!organization || organization.id !== row.organizationId || organization.status !== "active") return invalid;
  if (row.interactionUid !== input.interactionUid) return invalid;
  const now = new Date();
  if (row.consumedAt || row.expiresAt <= now) return invalid;

  // The organization (or the client's override) may have turned magic links off since sending.
  const client = row.clientId ? await getClientRecord(prisma, services.cache, row.clientId) : null;
  const methods = effectiveLoginMethods(client ?? { loginMethods: [] }, organization);
  if (!methods.includes("magic_link")) {
    await services.audit.record({
      eventType: "security.login_method_disabled",
      organizationId: organization.id,
      actorType: "anonymous",
      ip: input.ip,
      requestId: input.requestId,
      data: { attemptedMethod: "magic_link", clientId: row.clientId, organizationId: organization.id, endpoint: "POST /interaction/:uid/magic-link/verify" },
    });
    return { ok: false, reason: "method_disabled" };
  }

  const user = await prisma.user.findUnique({ where: { id: row.userId }, select: { status: true } });
  if (!user || user.status !== "active") return invalid;
  const consumed = await prisma.magicLinkToken.updateMany({
    where: { id: row.id, consumedAt: null, expiresAt: { gt: now } },
    data: { consumedAt: now },
  });
  if (consumed.count !== 1) return invalid;
  await services.audit.record({
    eventType: "auth.magic_link.verified",
    organizationId: organization.id,
    actorType: "user",
    actorId: row.userId,
    targetType: "user",
    targetId: row.userId,
    ip: input.ip,
    requestId: input.requestId,
    data: {},
  });
  return { ok: true, userId: row.userId, organizationId: organization.id, clientId: row.clientId };
}
