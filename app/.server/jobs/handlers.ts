import { sendInvitationJob } from "../auth/invitations";
import { sendMagicLinkJob } from "../auth/magic-link";
import { sendPasswordResetJob } from "../auth/password-reset";
import { sendEmailOtpJob } from "../auth/two-factor/service";
import type { Services } from "../services";

/** Every queue's handler, registered once per process before the workers start. */
export function registerJobHandlers(services: Services): void {
  services.jobs.handle("magic-link", (data, job) => sendMagicLinkJob(services, data, job));
  services.jobs.handle("password-reset", (data, job) => sendPasswordResetJob(services, data, job));
  services.jobs.handle("invitation", (data, job) => sendInvitationJob(services, data, job));
  services.jobs.handle("email-otp", (data, job) => sendEmailOtpJob(services, data, job));
}
