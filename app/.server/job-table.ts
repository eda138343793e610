import { accountJobs } from "./account/jobs";
import { authJobs } from "./auth/jobs";
import { jobServiceContext, type ContextSource } from "./context";
import type { JobName } from "./jobs/job";
import { registerJobs } from "./jobs/job";
import { samlMetadataRefreshJob } from "./federation/saml-jobs";
import { domainRecheckJob } from "./domains/jobs";
import { backchannelLogoutJob } from "./oidc/features/backchannel-logout-job";
import { webhookJob } from "./webhooks/jobs";
import { ssfPushJob } from "./ssf/jobs";
import { auditStreamJob } from "./audit-stream/jobs";

/**
 * Every job this process works (decision 072), as the features define them beside their code:
 * the queue takes its names, payload schemas and retries from here, and the handlers are
 * registered from here. A job a feature adds goes in its job module and on this list.
 */
export const JOB_TABLE = [...authJobs, ...accountJobs, backchannelLogoutJob, webhookJob, samlMetadataRefreshJob, domainRecheckJob, auditStreamJob, ssfPushJob] as const;

/** Every job a feature registered a payload for is on the list, and nothing else (checked by tsc). */
type Listed = (typeof JOB_TABLE)[number]["name"];
const everyJobListed: [JobName] extends [Listed] ? ([Listed] extends [JobName] ? true : never) : never = true;
void everyJobListed;

/**
 * What each job's handler is handed: a context acting as the system (JobServiceContext), except
 * the provider's back-channel logout, which asks for the database, the tenant registry and the
 * logger by a shape of its own (`LogoutDeliveryDeps`, oidc/features/backchannel-logout.ts) and is
 * handed just those.
 */
const JOBS_ON_SERVICES = [backchannelLogoutJob] as const;
const JOBS_ON_CONTEXT = [...authJobs, ...accountJobs, webhookJob, samlMetadataRefreshJob, domainRecheckJob, auditStreamJob, ssfPushJob] as const;
/** Every listed job is in one of the two, so every one gets its handler (checked by tsc). */
type Handed = (typeof JOBS_ON_SERVICES)[number]["name"] | (typeof JOBS_ON_CONTEXT)[number]["name"];
const everyJobHanded: [Listed] extends [Handed] ? true : never = true;
void everyJobHanded;

/**
 * Registers every handler, once per process before the workers start; the context-handed jobs act
 * as the system. Part of the composition root: it is where jobs get their collaborators.
 */
export function registerJobHandlers(services: ContextSource): void {
  registerJobs(services.jobs, JOBS_ON_SERVICES, { db: services.db, oidc: services.oidc, logger: services.logger });
  registerJobs(services.jobs, JOBS_ON_CONTEXT, jobServiceContext(services));
}
