import { sendEmailChangeJob, sendEmailChangeNoticeJob } from "../account/email";
import { sendInvitationJob } from "../auth/invitations";
import { sendMagicLinkJob } from "../auth/magic-link";
import { sendPasswordResetJob } from "../auth/password-reset";
import { sendEmailOtpJob } from "../auth/two-factor/service";
import { systemActor } from "../auth/actors";
import { inTransaction } from "../context";
import type { Services } from "../services";
import { deliverWebhookJob } from "../webhooks/deliver";
import { describeMailJob } from "./mail-jobs";
import { deliverLogoutNotice } from "../oidc/backchannel-logout";
import type { ExpiryPolicy, JobName } from "./queue";

/**
 * A mail whose link expired before it could be delivered ends there, with a `mail.expired`
 * entry: the kind and the number of attempts, never the link.
 */
function expiryOf<N extends JobName>(services: Services, name: N): ExpiryPolicy<N> {
  return {
    async deadline(data, job) {
      return (await describeMailJob(services.db.prisma, services.settings, name, data, job)).deadline;
    },
    async expired(data, job, attempts) {
      const subject = await describeMailJob(services.db.prisma, services.settings, name, data, job);
      await inTransaction(services, systemActor(null), async (ctx) => {
        ctx.audit({
          eventType: "mail.expired",
          organizationId: subject.organizationId,
          ...(subject.target ? { targetType: subject.target.type, targetId: subject.target.id } : {}),
          data: { kind: name, attempts },
        });
      });
    },
  };
}

/** Every queue's handler, registered once per process before the workers start. */
export function registerJobHandlers(services: Services): void {
  services.jobs.handle("magic-link", (data, job) => sendMagicLinkJob(services, data, job), expiryOf(services, "magic-link"));
  services.jobs.handle("password-reset", (data, job) => sendPasswordResetJob(services, data, job), expiryOf(services, "password-reset"));
  services.jobs.handle("invitation", (data, job) => sendInvitationJob(services, data, job), expiryOf(services, "invitation"));
  services.jobs.handle("email-otp", (data, job) => sendEmailOtpJob(services, data, job), expiryOf(services, "email-otp"));
  services.jobs.handle("email-change", (data, job) => sendEmailChangeJob(services, data, job), expiryOf(services, "email-change"));
  services.jobs.handle("email-change-notice", (data) => sendEmailChangeNoticeJob(services, data), expiryOf(services, "email-change-notice"));
  services.jobs.handle("webhook", (data, job) => deliverWebhookJob(services, data, job));
  services.jobs.handle("backchannel-logout", (data) => deliverLogoutNotice(services, data));
}
