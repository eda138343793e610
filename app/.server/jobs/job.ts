import type { z } from "zod";

/**
 * What a job is, as the feature that owns it states it (decision 072): a name, the zod schema of
 * its payload, its handler, and how it retries. Each feature keeps its jobs beside its code; the
 * job table at the composition root lists them; the queue learns names, payloads and retries from
 * that table and knows no feature.
 *
 * A feature makes its payloads known to the type system by adding them to `JobPayloadSchemas`
 * in its job module (a module augmentation), so `enqueue` checks a payload at compile time from
 * the schema without jobs/ or the context importing any feature.
 */
// eslint-disable-next-line @typescript-eslint/no-empty-object-type -- filled by the features' job modules
export interface JobPayloadSchemas {}

export type JobName = keyof JobPayloadSchemas & string;

/** The payload a job is enqueued with and its handler receives, from the schema its feature registered. */
export type JobPayloads = { [N in JobName]: JobPayloadSchemas[N] extends z.ZodType ? z.output<JobPayloadSchemas[N]> : never };

export interface JobContext {
  /** The id of the job that first carried this payload (tokens are derived from it). */
  id: string;
  /** How many earlier attempts of this job failed or were interrupted (0 on the first run). */
  retryCount: number;
  /** When the payload was first queued. */
  queuedAt: Date;
}

export type JobHandler<N extends JobName> = (data: JobPayloads[N], job: JobContext) => Promise<void>;

/** How long a job's mail is worth sending, and what is recorded when it no longer is. */
export interface ExpiryPolicy<N extends JobName> {
  /** When the link or code the mail carries stops working; null when there is none (yet). */
  deadline(data: JobPayloads[N], job: JobContext): Promise<Date | null>;
  /** The job ends undelivered because its link expired (audited by the caller). */
  expired(data: JobPayloads[N], job: JobContext, attempts: number): Promise<void>;
}

/**
 * One job of a feature. `D` is what its handler is handed besides the payload (the composition
 * root's services); jobs/ never names it.
 */
export interface JobDefinition<N extends JobName = JobName, D = never> {
  name: N;
  payload: JobPayloadSchemas[N];
  handler(deps: D, data: JobPayloads[N], job: JobContext): Promise<void>;
  /** When its link expires, for a job that carries one (mail). */
  expiry?: (deps: NoInfer<D>) => ExpiryPolicy<N>;
  /** Seconds between attempts after each failure; without it, the queue's default (mail's). */
  retrySchedule?: readonly number[];
  /**
   * Whether a job that used every retry waits in a dead-letter queue (default true). A job whose
   * own row records its outcome (a webhook delivery) has none.
   */
  deadLetter?: boolean;
}

/** The facts about a job the queue needs, whatever its handler is handed. */
export type JobSpec = Pick<JobDefinition, "name" | "retrySchedule" | "deadLetter"> & { payload: z.ZodType };

/** States a job; the name picks the payload schema the feature registered for it. */
export function defineJob<N extends JobName, D>(definition: JobDefinition<N, D>): JobDefinition<N, D> {
  return definition;
}

/** What the queue's `handle` takes, so this module needs no import of the queue. */
interface Handles {
  handle<N extends JobName>(name: N, handler: JobHandler<N>, expiry?: ExpiryPolicy<N>): void;
}

/** Registers every job's handler of a table with the queue, once per process before the workers start. */
export function registerJobs<D>(queue: Handles, table: ReadonlyArray<JobDefinition<JobName, D>>, deps: D): void {
  for (const job of table) {
    queue.handle(job.name, (data, context) => job.handler(deps, data, context), job.expiry?.(deps));
  }
}
