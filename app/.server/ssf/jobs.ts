import { z } from "zod";
import { defineJob } from "../jobs/job";
import { deliverSsfPushJob } from "./deliver";

/**
 * One push of a Security Event Token (RFC 8935, decision 093). A receiver that is down or
 * answers 5xx is tried again, the way webhooks are, for about a day: the first retry soon (a
 * restart), then at growing intervals.
 */
export const SSF_RETRY_SCHEDULE_SECONDS: readonly number[] = [5, 60, 5 * 60, 30 * 60, 2 * 3600, 6 * 3600, 12 * 3600];

const ssfPushPayload = z.object({ eventId: z.string() });

declare module "../jobs/job" {
  interface JobPayloadSchemas {
    "ssf-push": typeof ssfPushPayload;
  }
}

export const ssfPushJob = defineJob({
  name: "ssf-push",
  payload: ssfPushPayload,
  handler: deliverSsfPushJob,
  retrySchedule: SSF_RETRY_SCHEDULE_SECONDS,
  // The event's own row is its record: a failed job is just removed later.
  deadLetter: false,
});
