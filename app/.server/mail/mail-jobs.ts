import { EMAIL_CHANGE_TTL_MINUTES } from "../auth/email-links";
import type { Db, StagedContext } from "../context";
import type { ExpiryPolicy, JobName, JobPayloads } from "../jobs/job";
import type { Settings } from "../settings/settings";

/** The queues whose jobs send mail: the undelivered-mail page and its re-drive know only these. */
export const MAIL_QUEUES = ["magic-link", "password-reset", "invitation", "email-otp", "email-change", "email-change-notice"] as const satisfies readonly JobName[];
export type MailJobName = (typeof MAIL_QUEUES)[number];

/**
 * What a mail job is about, read from its payload and the rows it points to: whom it goes to
 * (as the Admin API shows people elsewhere: the user's id and address), and until when the link
 * or code it carries works. The worker asks before each attempt and before scheduling the next;
 * the dead-letter list and its re-drive ask too.
 */
export interface MailJobSubject {
  organizationId: string | null;
  userId: string | null;
  email: string | null;
  /** When its link or code stops working; null when it carries none (yet). */
  deadline: Date | null;
  /** The audit target of an entry about this mail. */
  target: { type: "user" | "invitation"; id: string } | null;
}

const addMinutes = (at: Date, minutes: number) => new Date(at.getTime() + minutes * 60_000);

export async function describeMailJob<N extends MailJobName>(
  db: Db,
  settings: Settings,
  name: N,
  payload: JobPayloads[N],
  job: { id: string; queuedAt: Date },
): Promise<MailJobSubject> {
  switch (name) {
    case "magic-link":
    case "password-reset": {
      const data = payload as JobPayloads["magic-link"] | JobPayloads["password-reset"];
      const user = await db.user.findUnique({ where: { organizationId_email: { organizationId: data.organizationId, email: data.email } }, select: { id: true } });
      // The token is made at the first attempt, keyed by the job; before it exists, the link
      // would have expired one lifetime after the request.
      const token =
        name === "magic-link"
          ? await db.magicLinkToken.findUnique({ where: { jobId: job.id }, select: { expiresAt: true } })
          : await db.passwordResetToken.findUnique({ where: { jobId: job.id }, select: { expiresAt: true } });
      const ttl = await settings.get(name === "magic-link" ? "auth.magicLinkTtlMinutes" : "auth.passwordResetTtlMinutes");
      return {
        organizationId: data.organizationId,
        userId: user?.id ?? null,
        email: data.email,
        deadline: token?.expiresAt ?? addMinutes(job.queuedAt, ttl),
        target: user ? { type: "user", id: user.id } : null,
      };
    }
    case "invitation": {
      const data = payload as JobPayloads["invitation"];
      const invitation = await db.invitation.findUnique({ where: { id: data.invitationId }, select: { organizationId: true, email: true, expiresAt: true } });
      return {
        organizationId: invitation?.organizationId ?? null,
        userId: null,
        email: invitation?.email ?? null,
        deadline: invitation?.expiresAt ?? null,
        target: { type: "invitation", id: data.invitationId },
      };
    }
    case "email-otp": {
      const data = payload as JobPayloads["email-otp"];
      const code = await db.emailOtpCode.findUnique({ where: { id: data.codeId }, select: { expiresAt: true, user: { select: { organizationId: true, email: true } } } });
      return {
        organizationId: code?.user.organizationId ?? null,
        userId: data.userId,
        email: code?.user.email ?? null,
        deadline: code?.expiresAt ?? null,
        target: { type: "user", id: data.userId },
      };
    }
    case "email-change":
    case "email-change-notice": {
      const data = payload as JobPayloads["email-change"];
      // The confirmation goes to the new address and its link lives an hour from the request; the
      // notice to the current one carries no link and is worth sending as long as the change is.
      const token = name === "email-change" ? await db.emailChangeToken.findUnique({ where: { jobId: job.id }, select: { expiresAt: true } }) : null;
      const current = name === "email-change-notice" ? await db.user.findUnique({ where: { id: data.userId }, select: { email: true } }) : null;
      return {
        organizationId: data.organizationId,
        userId: data.userId,
        email: name === "email-change" ? data.newEmail : (current?.email ?? null),
        deadline: token?.expiresAt ?? addMinutes(job.queuedAt, EMAIL_CHANGE_TTL_MINUTES),
        target: { type: "user", id: data.userId },
      };
    }
  }
  throw new Error(`not a mail job: ${String(name)}`);
}

/**
 * The expiry of a mail job's link, for its job definition: a mail whose link expired before it
 * could be delivered ends there, with a `mail.expired` entry (the kind and the number of
 * attempts, never the link).
 */
export function mailExpiry<N extends MailJobName>(name: N): (staged: StagedContext<"settings">) => ExpiryPolicy<N> {
  return (staged) => ({
    async deadline(data, job) {
      return (await describeMailJob(staged.db, staged.settings, name, data, job)).deadline;
    },
    async expired(data, job, attempts) {
      const subject = await describeMailJob(staged.db, staged.settings, name, data, job);
      await staged.transaction(async (ctx) => {
        ctx.audit({
          eventType: "mail.expired",
          organizationId: subject.organizationId,
          ...(subject.target ? { targetType: subject.target.type, targetId: subject.target.id } : {}),
          data: { kind: name, attempts },
        });
      });
    },
  });
}
