import { accountJobs } from "./account/jobs";
import { authJobs } from "./auth/jobs";
import type { JobName } from "./jobs/job";
import { registerJobs } from "./jobs/job";
import { backchannelLogoutJob } from "./oidc/features/backchannel-logout-job";
import type { Services } from "./services";
import { webhookJob } from "./webhooks/jobs";

/**
 * Every job this process works (decision 072), as the features define them beside their code:
 * the queue takes its names, payload schemas and retries from here, and the handlers are
 * registered from here. A job a feature adds goes in its job module and on this list.
 */
export const JOB_TABLE = [...authJobs, ...accountJobs, backchannelLogoutJob, webhookJob] as const;

/** Every job a feature registered a payload for is on the list, and nothing else (checked by tsc). */
type Listed = (typeof JOB_TABLE)[number]["name"];
const everyJobListed: [JobName] extends [Listed] ? ([Listed] extends [JobName] ? true : never) : never = true;
void everyJobListed;

/** Registers every handler, once per process before the workers start. */
export function registerJobHandlers(services: Services): void {
  registerJobs(services.jobs, JOB_TABLE, services);
}
