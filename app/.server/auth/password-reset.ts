import { Prisma, type Organization } from "~/generated/prisma/client";
import { normalizeEmail } from "~/schemas/email";
import { effectiveLoginMethods, type LoginMethod } from "~/schemas/login-methods";
import { getClientRecord, type ClientRecord } from "../directory/clients";
import type { Context, JobServiceContext, StagedContext } from "../context";
import { invalidateUser } from "../directory/users";
import type { JobContext, JobPayloads } from "../jobs/queue";
import { sendBrandedEmail } from "../mail/send";
import { lookupInteractionOrganization } from "../oidc/storage/adapter";
import { endBrowserSessions, grantClientIds } from "../oidc/storage/sessions";
import { accountPageUrl } from "../oidc/storage/account-client";
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
/** The per-account limit's key: the address alone (the spec counts reset requests per email, whatever the organization). */
export const resetLimitKey = (email: string) => normalizeEmail(email);

export async function requestPasswordReset(staged: StagedContext<"limits" | "logger">, input: JobPayloads["password-reset"]): Promise<ResetRequestOutcome> {
  const email = normalizeEmail(input.email);
  const limit = await consumeEach(staged.limits, [
    ["passwordResetIp", input.ip],
    ["passwordReset", resetLimitKey(email)],
  ]);
  if (!limit.allowed) return { status: "rate_limited", retryAfterSeconds: limit.retryAfterSeconds };
  await staged.transaction(anonymousActor({ ip: input.ip, requestId: null }), async (ctx) => {
    const jobId = await ctx.enqueue("password-reset", { ...input, email });
    if (!jobId) ctx.logger.warn({ organizationId: input.organizationId }, "password reset request dropped: queue full");
    ctx.audit({ eventType: "auth.password_reset.requested", organizationId: input.organizationId, data: { email } });
  });
  return { status: "accepted" };
}

/** What the job is handed (the job table builds it); its write acts as the system, from the address that asked. */
export type PasswordResetJobContext = JobServiceContext<"tokens" | "settings" | "mailer" | "config">;

/** The lookup, the token (keyed by the job: one per job, whatever the retries) and then the mail. */
export async function sendPasswordResetJob(staged: PasswordResetJobContext, data: JobPayloads["password-reset"], job: JobContext): Promise<void> {
  const user = await staged.db.user.findUnique({
    where: { organizationId_email: { organizationId: data.organizationId, email: data.email } },
    include: { organization: true },
  });
  if (!user || user.status !== "active" || user.organization.status !== "active") return;
  const token = staged.tokens.derive("password-reset", job.id);
  const ttlMinutes = await staged.settings.get("auth.passwordResetTtlMinutes");
  await staged.transaction(systemActor(data.ip), async (ctx) => {
    await ctx.db.passwordResetToken.upsert({
      where: { jobId: job.id },
      create: {
        jobId: job.id,
        tokenHash: ctx.tokens.hash(token),
        organizationId: user.organizationId,
        userId: user.id,
        interactionUid: data.interactionUid,
        // Jobs queued before the column existed carry no client.
        clientId: data.clientId ?? null,
        expiresAt: new Date(Date.now() + ttlMinutes * 60_000),
      },
      update: {},
    });
  });
  await sendBrandedEmail(staged.mailer, {
    to: user.email,
    organization: user.organization,
    accountUrl: accountPageUrl(staged.config.baseUrl, user.organization.slug),
    language: user.locale ?? data.language,
    template: {
      kind: "password-reset",
      link: passwordResetUrl(staged.config.baseUrl, { organizationSlug: user.organization.slug, token, language: data.language }),
      expiresMinutes: ttlMinutes,
    },
  });
}

/**
 * What a reset link is, for the page that opens it. The link carries only its token and its
 * organization's slug, so it works in any browser (decision 032): the interaction it was asked from is
 * a place to return to, not a condition. A link of another organization is `unknown`, like a made-up
 * one; `used` and `expired` are told apart because only the holder of the token learns it. The
 * user is not read here: the page refuses a disabled password method before any user lookup.
 */
export type ResetLink =
  | { status: "unknown" }
  | { status: "usable" | "used" | "expired"; row: ResetTokenRow; organization: Organization; client: ClientRecord | null; methods: LoginMethod[] };

export type ResetTokenRow = { id: string; userId: string; organizationId: string; interactionUid: string | null; clientId: string | null };

export async function findResetLink(ctx: Context<"tokens" | "cache">, organizationSlug: string, token: string): Promise<ResetLink> {
  if (token.length < 20 || token.length > 100) return { status: "unknown" };
  const found = await ctx.db.passwordResetToken.findUnique({ where: { tokenHash: ctx.tokens.hash(token) }, include: { organization: true } });
  if (!found || found.organization.slug !== organizationSlug.toLowerCase() || found.organization.status !== "active") return { status: "unknown" };
  const { organization, consumedAt, expiresAt, id, userId, organizationId, interactionUid, clientId } = found;
  const stored = clientId ? await getClientRecord(ctx.db, ctx.cache, clientId) : null;
  const client = stored && stored.organizationId === organization.id ? stored : null;
  const status = consumedAt ? "used" : expiresAt <= new Date() ? "expired" : "usable";
  const methods = effectiveLoginMethods(client ?? { loginMethods: [] }, organization);
  return { status, row: { id, userId, organizationId, interactionUid, clientId }, organization, client, methods };
}

/** The email of the link's user while the account may still reset its password, else null. */
export async function resettableUserEmail(ctx: Context, row: ResetTokenRow): Promise<string | null> {
  const user = await ctx.db.user.findUnique({ where: { id: row.userId }, select: { email: true, status: true } });
  return user && user.status === "active" ? user.email : null;
}

export type ResetOutcome = { ok: true; userId: string } | { ok: false; reason: "invalid_token" } | { ok: false; reason: "weak_password"; problem: PasswordProblem; limit?: number };

/**
 * Sets the new password (hashed before the transaction). The used link and the user's other
 * links, the password, the end of the user's grants and tokens and the
 * `auth.password_reset.completed` entry commit together; the browser sessions in the store end
 * after the commit. The reset does not sign in: the person signs in with the new password.
 */
export async function completePasswordReset(
  staged: StagedContext<"settings" | "passwords" | "store" | "logoutNotices" | "cache">,
  input: { row: ResetTokenRow; organizationName: string; newPassword: string; meta: RequestMeta },
): Promise<ResetOutcome> {
  const { row } = input;
  const email = await resettableUserEmail(staged, row);
  if (email === null) return { ok: false, reason: "invalid_token" };
  const minLength = await staged.settings.get("auth.passwordMinLength");
  const check = checkNewPassword(input.newPassword, { minLength, email, organizationName: input.organizationName });
  if (!check.ok) return { ok: false, reason: "weak_password", problem: check.problem!, ...(check.limit ? { limit: check.limit } : {}) };
  const passwordHash = await staged.passwords.hash(input.newPassword);
  const { userId } = row;
  const done = await staged.transaction(userActor(userId, input.meta), async (ctx) => {
    const now = new Date();
    const consumed = await ctx.db.passwordResetToken.updateMany({ where: { id: row.id, consumedAt: null, expiresAt: { gt: now } }, data: { consumedAt: now } });
    if (consumed.count !== 1) return false;
    await ctx.db.user.update({ where: { id: userId }, data: { passwordHash, legacyPassword: Prisma.DbNull, failedLoginCount: 0, lockedUntil: null, version: { increment: 1 } } });
    // Other reset links of this user die with this one.
    await ctx.db.passwordResetToken.updateMany({ where: { userId, consumedAt: null }, data: { consumedAt: now } });
    // Refresh tokens stop working with the commit; browser sessions live in the store. The
    // clients of both are told with logout tokens (decision 048).
    const clientIds = await grantClientIds(ctx.db, row.organizationId, userId);
    await ctx.db.oidcPayload.deleteMany({ where: { organizationId: row.organizationId, accountId: userId } });
    ctx.afterCommit(() => endBrowserSessions(ctx.store, row.organizationId, userId, { notices: ctx.logoutNotices, grantClientIds: clientIds }));
    ctx.afterCommit(() => invalidateUser(ctx.cache, userId));
    ctx.audit({ eventType: "auth.password_reset.completed", organizationId: row.organizationId, targetType: "user", targetId: userId, data: {} });
    return true;
  });
  return done ? { ok: true, userId } : { ok: false, reason: "invalid_token" };
}

/**
 * Where a completed reset goes next. When the sign-in that asked is still open, to it (its page
 * says the password changed and asks for the new one); the sign-in page itself sends a browser
 * that does not hold that interaction on to the "password changed" page, because only the
 * interaction's own cookie (scoped to its path) says whose it is. Otherwise null: the reset page
 * shows "password changed" itself.
 */
export async function continuationAfterReset(ctx: Context<"store">, row: ResetTokenRow, page: { organizationSlug: string; language: string }): Promise<string | null> {
  if (!row.interactionUid || (await lookupInteractionOrganization(ctx.store, row.interactionUid)) !== row.organizationId) return null;
  const next = new URLSearchParams({ reset: "done", org: page.organizationSlug, lang: page.language });
  if (row.clientId) next.set("client", row.clientId);
  return `/interaction/${encodeURIComponent(row.interactionUid)}?${next}`;
}

/** The organization of a reset link in the format mailed before links named their organization. */
export async function legacyResetLinkSlug(ctx: Context<"tokens">, token: string): Promise<string | null> {
  if (token.length < 20 || token.length > 100) return null;
  const row = await ctx.db.passwordResetToken.findUnique({
    where: { tokenHash: ctx.tokens.hash(token) },
    select: { organization: { select: { slug: true } } },
  });
  return row?.organization.slug ?? null;
}
