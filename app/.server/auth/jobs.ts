import { z } from "zod";
import type { JobServiceContext } from "../context";
import { defineJob } from "../jobs/job";
import { mailExpiry } from "../mail/mail-jobs";
import { sendInvitationJob } from "./invitations";
import { sendMagicLinkJob } from "../sign-in/magic-link-request";
import { sendPasswordResetJob } from "./password-reset";
import { sendEmailOtpJob } from "../sign-in/email-code-mail";

/** The mail jobs of sign-in and invitations (decision 072): each sends one mail, retried on mail's schedule. */
const magicLinkPayload = z.object({
  organizationId: z.string(),
  email: z.string(),
  interactionUid: z.string().nullable(),
  clientId: z.string().nullable(),
  language: z.string(),
  ip: z.string().nullable(),
});

const passwordResetPayload = z.object({
  organizationId: z.string(),
  email: z.string(),
  /** Where the sign-in that asked can go on, when it is still open in the browser that opens the link. */
  interactionUid: z.string().nullable(),
  /** The client whose sign-in asked (optional: jobs queued before it was added lack it). */
  clientId: z.string().nullable().optional(),
  language: z.string(),
  ip: z.string().nullable(),
});

const invitationPayload = z.object({ invitationId: z.string(), language: z.string() });

const emailOtpPayload = z.object({ userId: z.string(), codeId: z.string(), language: z.string() });

declare module "../jobs/job" {
  interface JobPayloadSchemas {
    "magic-link": typeof magicLinkPayload;
    "password-reset": typeof passwordResetPayload;
    invitation: typeof invitationPayload;
    "email-otp": typeof emailOtpPayload;
  }
}

/** What the mails and their expiry (which reads the settings and audits) are handed. */
type AuthJobContext = JobServiceContext<"mailer" | "config" | "tokens" | "settings" | "otp">;

export const authJobs = [
  defineJob<"magic-link", AuthJobContext>({ name: "magic-link", payload: magicLinkPayload, handler: sendMagicLinkJob, expiry: mailExpiry("magic-link") }),
  defineJob<"password-reset", AuthJobContext>({ name: "password-reset", payload: passwordResetPayload, handler: sendPasswordResetJob, expiry: mailExpiry("password-reset") }),
  defineJob<"invitation", AuthJobContext>({ name: "invitation", payload: invitationPayload, handler: sendInvitationJob, expiry: mailExpiry("invitation") }),
  defineJob<"email-otp", AuthJobContext>({ name: "email-otp", payload: emailOtpPayload, handler: sendEmailOtpJob, expiry: mailExpiry("email-otp") }),
] as const;
