import { accountJobs } from "./account/jobs";
import { authJobs } from "./auth/jobs";
import { jobServiceContext } from "./context";
import type { JobName } from "./jobs/job";
import { registerJobs } from "./jobs/job";
import { backchannelLogoutJob } from "./oidc/backchannel-logout-job";
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

/**
 * Registers every handler, once per process before the workers start. The account and webhook
 * jobs are handed a context (acting as the system); the sign-in's and the provider's jobs still
 * take the Services bag.
 */
export function registerJobHandlers(services: Services): void {
  registerJobs(services.jobs, [...authJobs, backchannelLogoutJob], services);
  registerJobs(services.jobs, [...accountJobs, webhookJob], jobServiceContext(services));
}
