import { normalizeEmail } from "~/schemas/email";
import type { JobContext, JobPayloads } from "../jobs/queue";
import { sendBrandedEmail } from "../mail/send";
import { renderEmail } from "../mail/render";
import { brandingOf } from "../branding/pages";
import type { Context, StagedContext } from "../context";
import { newUuidV7 } from "../db/ids";
import { invalidateUser } from "../directory/users";
import { INVITATION_TTL_DAYS, invitationUrl } from "./email-links";
import { checkNewPassword, type PasswordProblem } from "./password-policy";
import { NO_REQUEST, userActor } from "./actors";
import { isSupportedLanguage, FALLBACK_LANGUAGE } from "~/i18n/config";

/**
 * Invitations (spec "Invitation outcome"): inviting creates no user; the recipient's
 * acceptance does. The mail is sent by the job worker; its link is derived from the
 * invitation id, so a retried job sends the same link.
 */
export interface InvitationInput {
  organizationId: string;
  email: string;
  givenName?: string | undefined;
  familyName?: string | undefined;
  roles?: string[] | undefined;
  language?: string | undefined;
  invitedBy?: string | undefined;
}

export interface InvitationOutcome {
  invitationId: string;
  email: string;
  invitationSent: boolean;
  expiresAt: Date;
}

export class InvitationConflictError extends Error {
  constructor() {
    super("a user with this email already exists in the organization");
    this.name = "InvitationConflictError";
  }
}

/** The address already has an invitation that is neither accepted nor expired. */
export class InvitationPendingError extends Error {
  constructor(readonly invitationId: string) {
    super("an invitation to this address is pending");
    this.name = "InvitationPendingError";
  }
}

const invitationExpiry = () => new Date(Date.now() + INVITATION_TTL_DAYS * 86_400_000);

/**
 * Stores the invitation and enqueues its mail in the caller's write: the mail goes only if the
 * invitation commits. One pending invitation per address: a second is refused (the first can be
 * resent or revoked), an expired one is replaced. Two invitations racing for one address are
 * serialized on a transaction lock of the address, so the check holds without a unique index
 * (an expiry cannot be part of one).
 */
export async function inviteUser(ctx: Context<"tokens">, input: InvitationInput): Promise<InvitationOutcome> {
  const prisma = ctx.db;
  const email = normalizeEmail(input.email);
  await prisma.$executeRaw`SELECT pg_advisory_xact_lock(hashtextextended(${`porta_invitation:${input.organizationId}:${email}`}, 0))`;
  const existing = await prisma.user.findUnique({ where: { organizationId_email: { organizationId: input.organizationId, email } }, select: { id: true } });
  if (existing) throw new InvitationConflictError();
  const now = new Date();
  const pending = await prisma.invitation.findFirst({ where: { organizationId: input.organizationId, email, acceptedAt: null, expiresAt: { gt: now } }, select: { id: true } });
  if (pending) throw new InvitationPendingError(pending.id);
  await prisma.invitation.deleteMany({ where: { organizationId: input.organizationId, email, acceptedAt: null, expiresAt: { lte: now } } });
  const id = newUuidV7();
  const expiresAt = invitationExpiry();
  const language = isSupportedLanguage(input.language) ? input.language : FALLBACK_LANGUAGE;
  await prisma.invitation.create({
    data: {
      id,
      organizationId: input.organizationId,
      email,
      givenName: input.givenName ?? null,
      familyName: input.familyName ?? null,
      roles: input.roles ?? [],
      language,
      invitedBy: input.invitedBy ?? null,
      tokenHash: ctx.tokens.hash(ctx.tokens.derive("invitation", id)),
      expiresAt,
    },
  });
  const jobId = await ctx.enqueue("invitation", { invitationId: id, language });
  return { invitationId: id, email, invitationSent: jobId !== null, expiresAt };
}

/** The invitation mail as it would be sent, without sending anything or storing an invitation. */
export async function previewInvitation(ctx: Context<"config">, input: InvitationInput) {
  const organization = await ctx.db.organization.findUniqueOrThrow({ where: { id: input.organizationId } });
  const language = isSupportedLanguage(input.language) ? input.language : FALLBACK_LANGUAGE;
  const link = invitationUrl(ctx.config.baseUrl, { organizationSlug: organization.slug, token: "preview" });
  const rendered = await renderEmail(
    { kind: "invitation", link, expiresDays: INVITATION_TTL_DAYS, ...(input.invitedBy ? { invitedBy: input.invitedBy } : {}) },
    { language, branding: brandingOf(organization), organizationName: organization.name },
  );
  return { to: normalizeEmail(input.email), ...rendered };
}

/** Mails an open invitation (the job writes nothing: the invitation was committed with the job). */
export async function sendInvitationJob(ctx: Context<"tokens" | "mailer" | "config">, data: JobPayloads["invitation"], _job: JobContext): Promise<void> {
  const invitation = await ctx.db.invitation.findUnique({ where: { id: data.invitationId }, include: { organization: true } });
  if (!invitation || invitation.acceptedAt || invitation.expiresAt <= new Date() || invitation.organization.status !== "active") return;
  const token = ctx.tokens.derive("invitation", invitation.id);
  await sendBrandedEmail(ctx.mailer, {
    to: invitation.email,
    organization: invitation.organization,
    language: invitation.language,
    template: {
      kind: "invitation",
      link: invitationUrl(ctx.config.baseUrl, { organizationSlug: invitation.organization.slug, token }),
      expiresDays: INVITATION_TTL_DAYS,
      ...(invitation.invitedBy ? { invitedBy: invitation.invitedBy } : {}),
    },
  });
}

/** An open invitation of this organization for the token, or null. */
export async function findOpenInvitation(ctx: Context<"tokens">, organizationSlug: string, token: string) {
  if (token.length < 20 || token.length > 100) return null;
  const invitation = await ctx.db.invitation.findUnique({ where: { tokenHash: ctx.tokens.hash(token) }, include: { organization: true } });
  if (!invitation || invitation.organization.slug !== organizationSlug.toLowerCase()) return null;
  if (invitation.acceptedAt || invitation.expiresAt <= new Date() || invitation.organization.status !== "active") return null;
  return invitation;
}

export type AcceptOutcome =
  | { ok: true; userId: string }
  | { ok: false; reason: "invalid" | "exists" }
  | { ok: false; reason: "weak_password"; problem: PasswordProblem; limit?: number };

/**
 * Creates the user (with a password, or none when the organization signs in by magic link only).
 * The password is hashed first; claiming the invitation, the account, its roles and the
 * `user.invitation_accepted` entry then commit together. Accepting does not sign in: the
 * person signs in from an application, with the new account.
 */
export async function acceptInvitation(
  staged: StagedContext<"tokens" | "settings" | "passwords" | "cache">,
  input: { organizationSlug: string; token: string; givenName: string; familyName: string; password: string | null },
): Promise<AcceptOutcome> {
  const invitation = await findOpenInvitation(staged, input.organizationSlug, input.token);
  if (!invitation) return { ok: false, reason: "invalid" };
  let passwordHash: string | null = null;
  if (input.password !== null) {
    const minLength = await staged.settings.get("auth.passwordMinLength");
    const check = checkNewPassword(input.password, { minLength, email: invitation.email, organizationName: invitation.organization.name });
    if (!check.ok) return { ok: false, reason: "weak_password", problem: check.problem!, ...(check.limit ? { limit: check.limit } : {}) };
    passwordHash = await staged.passwords.hash(input.password);
  }
  // Chosen now, so that the new user is the actor of the transaction that creates it.
  const userId = newUuidV7();
  try {
    const accepted = await staged.transaction(userActor(userId, NO_REQUEST), async (ctx) => {
      const claimed = await ctx.db.invitation.updateMany({ where: { id: invitation.id, acceptedAt: null }, data: { acceptedAt: new Date() } });
      if (claimed.count !== 1) return false;
      await ctx.db.user.create({
        data: {
          id: userId,
          organizationId: invitation.organizationId,
          email: invitation.email,
          // Following the emailed link proves the address.
          emailVerified: true,
          givenName: input.givenName || invitation.givenName,
          familyName: input.familyName || invitation.familyName,
          locale: invitation.language,
          passwordHash,
        },
      });
      const roles = await ctx.db.role.findMany({ where: { organizationId: invitation.organizationId, name: { in: invitation.roles } }, select: { id: true } });
      if (roles.length > 0) await ctx.db.userRole.createMany({ data: roles.map((r) => ({ userId, roleId: r.id })) });
      await ctx.db.invitation.update({ where: { id: invitation.id }, data: { acceptedUserId: userId } });
      ctx.audit({ eventType: "user.invitation_accepted", organizationId: invitation.organizationId, targetType: "user", targetId: userId, data: { invitationId: invitation.id } });
      ctx.afterCommit(() => invalidateUser(ctx.cache, userId));
      return true;
    });
    return accepted ? { ok: true, userId } : { ok: false, reason: "invalid" };
  } catch (error) {
    if ((error as { code?: string }).code === "P2002") return { ok: false, reason: "exists" };
    throw error;
  }
}

/**
 * Sends a pending invitation's mail again, with the same link (derived from its id) and a renewed
 * expiry, so that an expired invitation can be revived too. An address that has meanwhile become
 * a user is refused like a new invitation.
 */
export async function resendInvitation(ctx: Context, invitation: { id: string; organizationId: string; email: string; language: string }): Promise<InvitationOutcome> {
  const existing = await ctx.db.user.findUnique({ where: { organizationId_email: { organizationId: invitation.organizationId, email: invitation.email } }, select: { id: true } });
  if (existing) throw new InvitationConflictError();
  const expiresAt = invitationExpiry();
  await ctx.db.invitation.update({ where: { id: invitation.id }, data: { expiresAt } });
  const jobId = await ctx.enqueue("invitation", { invitationId: invitation.id, language: invitation.language });
  return { invitationId: invitation.id, email: invitation.email, invitationSent: jobId !== null, expiresAt };
}
