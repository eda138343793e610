import { z } from "zod";
import type { JobServiceContext } from "../context";
import { defineJob } from "../jobs/job";
import { mailExpiry } from "../mail/mail-jobs";
import { sendEmailChangeJob, sendEmailChangeNoticeJob } from "./email";

/** A change of a person's address (decision 072): both mails are written with the request. */
const emailChangePayload = z.object({ organizationId: z.string(), userId: z.string(), newEmail: z.string(), language: z.string() });

declare module "../jobs/job" {
  interface JobPayloadSchemas {
    /** The confirmation link for a new address, mailed to that address. */
    "email-change": typeof emailChangePayload;
    /** The notice to the current address that a change to `newEmail` was asked for. */
    "email-change-notice": typeof emailChangePayload;
  }
}

/** What the mails and their expiry (which reads the settings and audits) are handed. */
type EmailChangeJobContext = JobServiceContext<"mailer" | "config" | "tokens" | "settings">;

export const accountJobs = [
  defineJob<"email-change", EmailChangeJobContext>({ name: "email-change", payload: emailChangePayload, handler: sendEmailChangeJob, expiry: mailExpiry("email-change") }),
  defineJob<"email-change-notice", EmailChangeJobContext>({
    name: "email-change-notice",
    payload: emailChangePayload,
    handler: sendEmailChangeNoticeJob,
    expiry: mailExpiry("email-change-notice"),
  }),
] as const;
