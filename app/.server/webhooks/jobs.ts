import { z } from "zod";
import { defineJob } from "../jobs/job";
import { WEBHOOK_RETRY_SCHEDULE_SECONDS } from "../jobs/schedule";
import { deliverWebhookJob } from "./deliver";

/** One attempt at a webhook delivery (deliver.ts, decisions 047 and 072). */
const webhookPayload = z.object({ deliveryId: z.string() });

declare module "../jobs/job" {
  interface JobPayloadSchemas {
    webhook: typeof webhookPayload;
  }
}

export const webhookJob = defineJob({
  name: "webhook",
  payload: webhookPayload,
  handler: deliverWebhookJob,
  retrySchedule: WEBHOOK_RETRY_SCHEDULE_SECONDS,
  // The delivery's own row is its record (and its replay): a failed job is just removed later.
  deadLetter: false,
});
