import { z } from "zod";
import { defineJob } from "../../jobs/job";
import { BACKCHANNEL_RETRY_SCHEDULE_SECONDS } from "../../jobs/schedule";
import { deliverLogoutNotice } from "./backchannel-logout";

/**
 * A logout token for one client (OpenID Back-Channel Logout 1.0, decisions 048 and 072): made
 * and signed at each attempt by the organization's provider, so a retry carries a fresh `iat`.
 */
const logoutNoticePayload = z.object({ organizationId: z.string(), clientId: z.string(), sub: z.string(), sid: z.string().nullable() });

declare module "../../jobs/job" {
  interface JobPayloadSchemas {
    "backchannel-logout": typeof logoutNoticePayload;
  }
}

export const backchannelLogoutJob = defineJob({
  name: "backchannel-logout",
  payload: logoutNoticePayload,
  handler: deliverLogoutNotice,
  retrySchedule: BACKCHANNEL_RETRY_SCHEDULE_SECONDS,
});
