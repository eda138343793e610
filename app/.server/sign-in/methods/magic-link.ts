import { effectiveLoginMethods } from "~/schemas/login-methods";
import { normalizeEmail } from "~/schemas/email";
import { magicLinkUrl } from "../../auth/email-links";
import { getClientRecord } from "../../directory/clients";
import { getOrganizationBySlug } from "../../directory/organizations";
import { inTransaction, type Context } from "../../context";
import type { InteractionContext } from "../interaction";
import type { JobContext, JobPayloads } from "../../jobs/queue";
import { sendBrandedEmail } from "../../mail/send";
import { accountPageUrl } from "../../oidc/account-client";
import type { Services } from "../../services";
import { systemActor, userActor, type RequestMeta } from "../../auth/actors";
import { finishSignIn } from "../finish";
import { auditMethodRefusal } from "../method-refusal";
import { checkPairing, isConfirmed, markConfirmed, pairingCode, startPairing, takeConfirmed } from "../magic-link-pairing";
import { lookupInteractionOrganization } from "../../oidc/adapter";
import { consumeEach } from "../../rate-limit/limiters";

/**
 * Magic links (spec "Magic link rules"). The request only enqueues tenant-bound work; the job
 * looks the account up, mints the link and mails it; absent or ineligible accounts end there,
 * silently. At the callback the organization and interaction in the link are untrusted: they
 * must equal what was stored, and a mismatch neither tells nor consumes anything.
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
  await inTransaction(services, systemActor(data.ip), async (ctx) => {
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

export type MagicLinkSignIn =
  | { status: "signed_in"; redirectTo: string }
  /** Invalid, expired, used, or another organization's or interaction's: one generic failure. */
  | { status: "invalid" }
  | { status: "method_disabled" }
  /** The link is used, but its interaction is gone from this browser: a new link must be requested. */
  | { status: "continuation_lost" }
  /** Another browser than the asking one, whose sign-in is still open: ask for the asking page's number (nothing consumed yet). */
  | { status: "confirm_elsewhere" };

export type MagicLinkPairing =
  | { status: "confirmed_elsewhere" }
  | { status: "wrong_code" }
  /** Too many wrong numbers: the link is burnt. */
  | { status: "pairing_exhausted" }
  | { status: "invalid" }
  | { status: "method_disabled" }
  | { status: "continuation_lost" };

type UsableLink = { id: string; userId: string; organizationId: string; clientId: string | null };

/**
 * Signs in with a link. Organization slug and interaction uid come from the request and are
 * compared with the stored ones before anything changes. The consumption, its
 * `auth.magic_link.verified` entry and the sign-in (finishSignIn) commit in one transaction; when
 * the interaction cannot continue (`at` is null: this browser has none, or it is not a login),
 * the link is consumed all the same and the person must ask for a new one.
 */
export async function signInWithMagicLink(
  services: Services,
  input: { token: string; organizationSlug: string; interactionUid: string; at: InteractionContext | null; meta: RequestMeta },
): Promise<MagicLinkSignIn> {
  const link = await findUsableLink(services, input);
  if (link.status !== "usable") return link;
  const { row } = link;

  const consume = (ctx: Context) => consumeLink(ctx, row);
  const actor = userActor(row.userId, input.meta);
  const ic = input.at;
  if (!ic && (await canPairWith(services, input.interactionUid, row))) return { status: "confirm_elsewhere" };
  if (!ic || ic.organization.id !== row.organizationId || ic.interaction.prompt.name !== "login") {
    return (await inTransaction(services, actor, consume)) ? { status: "continuation_lost" } : { status: "invalid" };
  }
  const { redirectTo } = await finishSignIn(services, { at: ic, method: "magic_link", meta: input.meta }, (complete) =>
    inTransaction(services, actor, async (ctx) => {
      if (await consume(ctx)) await complete(ctx, row.userId);
    }),
  );
  return redirectTo ? { status: "signed_in", redirectTo } : { status: "invalid" };
}

/** Uses the link up with its `auth.magic_link.verified` entry; false when another request used it first. */
async function consumeLink(ctx: Context, row: UsableLink): Promise<boolean> {
  const now = new Date();
  const consumed = await ctx.db.magicLinkToken.updateMany({ where: { id: row.id, consumedAt: null, expiresAt: { gt: now } }, data: { consumedAt: now } });
  if (consumed.count !== 1) return false;
  ctx.audit({ eventType: "auth.magic_link.verified", organizationId: row.organizationId, targetType: "user", targetId: row.userId, data: {} });
  return true;
}

/** Whether the link's own interaction is still open somewhere and showing a number. */
async function canPairWith(services: Services, interactionUid: string, row: UsableLink): Promise<boolean> {
  if ((await lookupInteractionOrganization(services.store, interactionUid)) !== row.organizationId) return false;
  return (await pairingCode(services.store, interactionUid)) !== null;
}

/** How long the asking page may take to notice the confirmation. */
const CONFIRMED_TTL_SECONDS = 10 * 60;

/**
 * The other browser's answer (decision 033): the link is checked exactly as for a sign-in, then the
 * typed number. A match uses the link up (its entry committed) and lets the asking browser finish;
 * a wrong number changes nothing but the count; the third burns the link. When the pairing is gone
 * (the asking page asked again, or it lapsed) the link is used up as a lost continuation.
 */
export async function confirmMagicLinkElsewhere(
  services: Services,
  input: { token: string; organizationSlug: string; interactionUid: string; code: string; meta: RequestMeta },
): Promise<MagicLinkPairing> {
  const link = await findUsableLink(services, input);
  if (link.status !== "usable") return link;
  const { row } = link;
  const check = await checkPairing(services.store, input.interactionUid, input.code);
  if (check === "wrong") return { status: "wrong_code" };
  const consumed = await inTransaction(services, userActor(row.userId, input.meta), (ctx) => consumeLink(ctx, row));
  if (!consumed) return { status: "invalid" };
  if (check === "exhausted") return { status: "pairing_exhausted" };
  if (check === "none") return { status: "continuation_lost" };
  await markConfirmed(services.store, input.interactionUid, row.userId, CONFIRMED_TTL_SECONDS);
  return { status: "confirmed_elsewhere" };
}

/**
 * The asking browser finishes a sign-in another browser confirmed: the link is already used (its
 * entry committed there), so this is the sign-in alone, once (`takeConfirmed`).
 */
export async function finishConfirmedElsewhere(services: Services, input: { at: InteractionContext; meta: RequestMeta }): Promise<string | null> {
  const ic = input.at;
  if (ic.interaction.prompt.name !== "login") return null;
  const userId = await takeConfirmed(services.store, ic.uid);
  if (!userId) return null;
  const user = await services.db.prisma.user.findUnique({ where: { id: userId }, select: { status: true, organizationId: true } });
  if (!user || user.status !== "active" || user.organizationId !== ic.organization.id) return null;
  const { redirectTo } = await finishSignIn(services, { at: ic, method: "magic_link", meta: input.meta }, (complete) =>
    inTransaction(services, userActor(userId, input.meta), (ctx) => complete(ctx, userId)),
  );
  return redirectTo;
}

/** The number the asking page shows for a link opened on another device ("" when none was asked for). */
export async function pairingCodeFor(services: Services, uid: string): Promise<string> {
  return (await pairingCode(services.store, uid)) ?? "";
}

/** Whether another browser has confirmed this interaction's link (the asking page polls it). */
export function confirmedElsewhere(services: Services, uid: string): Promise<boolean> {
  return isConfirmed(services.store, uid);
}

/** The checks that change nothing: the link, its authority (organization, interaction), its method, its user. */
async function findUsableLink(
  services: Services,
  input: { token: string; organizationSlug: string; interactionUid: string; meta: RequestMeta },
): Promise<{ status: "usable"; row: UsableLink } | { status: "invalid" } | { status: "method_disabled" }> {
  const { prisma } = services.db;
  const invalid = { status: "invalid" } as const;
  if (input.token.length < 20 || input.token.length > 100) return invalid;
  const row = await prisma.magicLinkToken.findUnique({ where: { tokenHash: services.tokens.hash(input.token) } });
  if (!row) return invalid;
  const organization = await getOrganizationBySlug(prisma, services.cache, input.organizationSlug);
  if (!organization || organization.id !== row.organizationId || organization.status !== "active") return invalid;
  if (row.interactionUid !== input.interactionUid) return invalid;
  if (row.consumedAt || row.expiresAt <= new Date()) return invalid;

  // The organization (or the client's override) may have turned magic links off since sending.
  const client = row.clientId ? await getClientRecord(prisma, services.cache, row.clientId) : null;
  const methods = effectiveLoginMethods(client ?? { loginMethods: [] }, organization);
  if (!methods.includes("magic_link")) {
    await auditMethodRefusal(services, input.meta, {
      organizationId: organization.id,
      clientId: row.clientId,
      method: "magic_link",
      endpoint: "POST /interaction/:uid/magic-link/verify",
    });
    return { status: "method_disabled" };
  }

  const user = await prisma.user.findUnique({ where: { id: row.userId }, select: { status: true } });
  if (!user || user.status !== "active") return invalid;
  return { status: "usable", row };
}
