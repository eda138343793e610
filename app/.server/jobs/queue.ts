import PgBoss from "pg-boss";
import type { Logger } from "pino";
import { randomUUID } from "node:crypto";
import type { Prisma } from "~/generated/prisma/client";
import type { Database } from "../db/client";
import type { ExpiryPolicy, JobContext, JobHandler, JobName, JobPayloads, JobSpec } from "./job";
import { decideRetry, MAIL_RETRY_SCHEDULE_SECONDS } from "./schedule";

/**
 * Porta's durable background work, on pg-boss: jobs are rows in PostgreSQL (or the embedded
 * PGlite, through the same connection the app uses), claimed with SKIP LOCKED so several
 * processes share one queue without double work, retried on a mail transfer agent's schedule
 * (schedule.ts) but never past the expiry of the link the job carries, and moved to a dead-letter
 * queue after the last failed attempt. Each queue has a bounded number of local workers and a
 * bounded length: a full queue refuses new jobs instead of growing. Decision 025.
 *
 * Which queues exist, what their payloads are and how they retry comes from the job table the
 * process is started with (job.ts, decision 072): this module knows no feature. A payload is
 * checked against its schema when a worker takes the job.
 */
export type { ExpiryPolicy, JobContext, JobHandler, JobName, JobPayloads } from "./job";

/** A write's transaction, as the context hands it over (the outbox row is written in it). */
type Db = Prisma.TransactionClient;

/**
 * What the queue adds to a payload when it is first queued. A dead job re-driven by an
 * administrator is a new job with the same `delivery`, so it derives the same token and keeps
 * the same expiry as the job that first carried it.
 */
export interface Delivery {
  /** The id of the job that first carried the payload. */
  key: string;
  /** When it was first queued (ISO 8601). */
  queuedAt: string;
}

export type QueuedPayload<N extends JobName> = JobPayloads[N] & { delivery?: Delivery };

export interface QueueSettings {
  /** Local workers per queue. */
  concurrency: number;
  /** Jobs waiting or running beyond which `enqueue` refuses. */
  maxLength: number;
  /** Seconds to wait after the 1st, 2nd, ... failed attempt; after the last, the dead-letter queue. */
  retrySchedule: readonly number[];
  /** A queue's schedule instead of the one its job states (tests shorten them). */
  retrySchedules: Partial<Record<JobName, readonly number[]>>;
  /** Wait before a job whose worker stopped or crashed mid-run is tried again. */
  restartDelaySeconds: number;
  /**
   * A running job that takes longer is taken to be abandoned (its process died) and tried again.
   * Above the mailer's bounded SMTP waits (SMTP_TIMEOUTS), so a live delivery is never doubled.
   */
  expireInSeconds: number;
  /** How often abandoned jobs are looked for (pg-boss maintenance). */
  maintenanceIntervalSeconds: number;
  /**
   * How often an idle worker looks for work it was not told about: a retry whose delay has
   * passed, or a job whose wake-up message was lost. New jobs wake the workers at once
   * (`JOBS_CHANNEL`), so this is a safety net, not the pace of delivery.
   */
  pollingIntervalSeconds: number;
  /** How often outbox jobs that missed their hand-over after the commit (an error there, a crash) are handed over. */
  outboxSweepSeconds: number;
  /**
   * Only this process uses the database (the embedded PGlite under the DATA_DIR lock): a job
   * still marked running at start was the previous process's, and is tried again at once.
   */
  soleProcess: boolean;
}

export const DEFAULT_QUEUE_SETTINGS: QueueSettings = {
  concurrency: 2,
  maxLength: 10_000,
  retrySchedule: MAIL_RETRY_SCHEDULE_SECONDS,
  retrySchedules: {},
  restartDelaySeconds: 2,
  expireInSeconds: 30,
  // Idle cost: each look is a statement (~1.4 ms embedded); both are safety nets (decision 029).
  maintenanceIntervalSeconds: 30,
  pollingIntervalSeconds: 30,
  outboxSweepSeconds: 30,
  soleProcess: false,
};

/**
 * The safety nets of the embedded database, rarer: there the process is the database's only
 * user, so no other process can abandon a job (its own previous run's are taken at start), and
 * the wake-up NOTIFY is a call within the process that cannot be lost on a network. Each look
 * is a PGlite statement with its garbage, most of the idle process's CPU (decision 029, docs/benchmarks.md).
 */
export const SOLE_PROCESS_SAFETY_NETS = { maintenanceIntervalSeconds: 300, pollingIntervalSeconds: 300, outboxSweepSeconds: 300 } as const satisfies Partial<QueueSettings>;

export interface JobQueue {
  /** Adds a job; returns its id, or null when the queue is full. */
  enqueue<N extends JobName>(name: N, data: JobPayloads[N]): Promise<string | null>;
  /**
   * Adds a job as a row of the caller's transaction (the outbox): it exists exactly when that
   * transaction commits. Call `handOver` with the id after the commit; the sweeper hands over
   * what a crash left. Returns the id, or null when the queue is full.
   */
  enqueueIn<N extends JobName>(db: Db, name: N, data: JobPayloads[N]): Promise<string | null>;
  /** Moves committed outbox rows to the queue (after a commit, or what a crash left). */
  handOver(ids?: string[]): Promise<void>;
  /** Registers the handler of a queue (and when its mail expires); work starts with `start`. */
  handle<N extends JobName>(name: N, handler: JobHandler<N>, expiry?: ExpiryPolicy<N>): void;
  start(): Promise<void>;
  stop(): Promise<void>;
  /** The seconds between a queue's attempts; its length is the number of retries. */
  retryScheduleOf(name: JobName): readonly number[];
  /** Jobs of a queue in a given state (tests and the admin statistics). */
  count(name: JobName, state: "waiting" | "dead"): Promise<number>;
  /** Every queue this process works, in the job table's order. */
  readonly queues: readonly JobName[];
  /** Whether a queue keeps jobs that used every retry in a dead-letter queue. */
  hasDeadLetterQueue(name: JobName): boolean;
}

/** Outbox rows older than this are handed over by the sweeper (younger ones are their commit's). */
const OUTBOX_GRACE_MS = 5_000;
export const deadLetterOf = (name: JobName) => `${name}.dead`;
/** The PostgreSQL channel that tells every process's workers which queue has new work. */
export const JOBS_CHANNEL = "porta_jobs";
/** How many times a retry's wake-up looks again for a retry pg-boss recorded later than expected, and after how long. */
const RETRY_LOOKS = 3;
const RETRY_LOOK_AFTER_MS = 1_000;

/** Why an attempt failed, in words that never quote the server (its replies may echo the address). */
export function failureReason(error: unknown): string {
  const e = error as { code?: unknown; responseCode?: unknown; name?: unknown };
  if (typeof e.responseCode === "number") return `smtp_${e.responseCode}`;
  if (typeof e.code === "string" && /^[A-Z_]{2,40}$/.test(e.code)) return e.code;
  return typeof e.name === "string" && /^[A-Za-z]{1,60}$/.test(e.name) ? e.name : "Error";
}

/** A refusal retrying cannot change: a recipient that is not an address, or a 5xx answer. */
function isPermanent(error: unknown): boolean {
  const e = error as { permanent?: unknown; responseCode?: unknown };
  return e.permanent === true || (typeof e.responseCode === "number" && e.responseCode >= 500 && e.responseCode < 600);
}

/** The error a failed attempt leaves in pg-boss (and in the dead-letter copy): reason and count only. */
export class DeliveryFailed extends Error {
  constructor(
    readonly reason: string,
    readonly attempts: number,
  ) {
    super(`mail not delivered: ${reason}`);
    this.name = "DeliveryFailed";
  }
}

/**
 * `jobs`: the job table (every queue this process works, with its payload schema and retries;
 * the handlers are registered with `handle`).
 */
export function createJobQueue(db: Database, logger: Logger, jobs: readonly JobSpec[], settings: Partial<QueueSettings> = {}): JobQueue {
  const config = { ...DEFAULT_QUEUE_SETTINGS, ...(settings.soleProcess ? SOLE_PROCESS_SAFETY_NETS : {}), ...settings, retrySchedules: { ...DEFAULT_QUEUE_SETTINGS.retrySchedules, ...settings.retrySchedules } };
  const specs = new Map<JobName, JobSpec>(jobs.map((job) => [job.name, job]));
  const queues: readonly JobName[] = [...specs.keys()];
  const scheduleOf = (name: JobName) => config.retrySchedules[name] ?? specs.get(name)?.retrySchedule ?? config.retrySchedule;
  const hasDeadLetterQueue = (name: JobName) => specs.get(name)?.deadLetter !== false;
  const boss = new PgBoss({
    db: { executeSql: (text, values) => db.executeSql(text, values) },
    schema: "pgboss",
    retryLimit: config.retrySchedule.length,
    retryDelay: config.restartDelaySeconds,
    retryBackoff: false,
    expireInSeconds: config.expireInSeconds,
    maintenanceIntervalSeconds: config.maintenanceIntervalSeconds,
    // Finished jobs are kept a week for inspection, then removed by pg-boss's maintenance.
    deleteAfterDays: 7,
    // Porta has no cron jobs; the scheduler would poll the database every few seconds for none.
    schedule: false,
  });
  boss.on("error", (error: Error) => logger.error({ err: { message: error.message } }, "job queue error"));
  boss.on("maintenance", () => {
    wakeForRetries().catch((error: unknown) => logger.warn({ err: { message: (error as Error).message } }, "could not look up due retries"));
  });
  const handlers = new Map<JobName, { handler: JobHandler<JobName>; expiry: ExpiryPolicy<JobName> | undefined }>();
  let started: Promise<void> | undefined;
  const workerIds = new Map<JobName, string[]>();
  let stopListening: (() => Promise<void>) | undefined;

  /** Wakes this process's idle workers of a queue ("*": of every queue, after a lost connection). */
  function wake(queue: string) {
    for (const [name, ids] of workerIds) {
      if (queue === "*" || queue === name) for (const id of ids) boss.notifyWorker(id);
    }
  }

  /**
   * At most one wake-up per queue, for its earliest due retry: maintenance looks retries up every
   * 30 s, and a retry hours away must not collect a timer from each look. A later retry is found
   * by the next look after this one fires (or by polling).
   */
  const retryTimers = new Map<JobName, { at: number; timer: NodeJS.Timeout }>();
  let stopped = false;
  /**
   * Wakes a queue's workers when a retry falls due (pg-boss only finds it by polling). The time is
   * this process's estimate: pg-boss records the failure (and the retry's start_after) a moment
   * after the handler threw, later still on a busy machine, so a wake-up can come too early and
   * find nothing. A second look shortly after reads the recorded time and wakes again, instead of
   * leaving the retry to the polling interval.
   */
  function wakeAt(name: JobName, at: Date, looksLeft = RETRY_LOOKS) {
    const due = at.getTime();
    const current = retryTimers.get(name);
    if (current && current.at <= due) return;
    if (current) clearTimeout(current.timer);
    const timer = setTimeout(() => {
      retryTimers.delete(name);
      wake(name);
      if (looksLeft > 0) {
        const look = setTimeout(() => {
          lookForRetry(name, looksLeft - 1).catch((error: unknown) => logger.warn({ err: { message: (error as Error).message } }, "could not look up due retries"));
        }, RETRY_LOOK_AFTER_MS);
        look.unref();
      }
    }, Math.max(0, due - Date.now()) + 50);
    timer.unref();
    retryTimers.set(name, { at: due, timer });
  }

  /** The queue's earliest retry as pg-boss recorded it, woken for when it is still waiting. */
  async function lookForRetry(name: JobName, looksLeft: number) {
    if (stopped) return;
    const result = await db.executeSql(`SELECT min(start_after) AS at FROM pgboss.job WHERE name = $1 AND state = 'retry'`, [name]);
    const at = (result.rows[0] as { at: Date | string | null } | undefined)?.at;
    if (at) wakeAt(name, new Date(at), looksLeft);
  }

  /**
   * After pg-boss's maintenance (which also turns jobs of a crashed worker into retries), the
   * next retry of each queue is looked up once, so this process wakes for it on time.
   */
  async function wakeForRetries() {
    const result = await db.executeSql(
      `SELECT name, min(start_after) AS at FROM pgboss.job WHERE name = ANY($1::text[]) AND state = 'retry' GROUP BY name`,
      [[...queues]],
    );
    for (const row of result.rows as Array<{ name: JobName; at: Date | string }>) wakeAt(row.name, new Date(row.at));
  }

  /** Tells the workers of every process sharing the database that a queue has new work. */
  async function announce(name: JobName) {
    await db.notify(JOBS_CHANNEL, name).catch((error: unknown) => {
      // The workers' polling finds the job a little later.
      logger.warn({ err: { message: (error as Error).message } }, "could not announce a new job");
    });
  }

  async function ensureQueues() {
    for (const name of queues) {
      // A mail that used every retry waits in its dead-letter queue for a re-drive.
      const deadLetter = hasDeadLetterQueue(name) ? { deadLetter: deadLetterOf(name) } : {};
      if (hasDeadLetterQueue(name)) await boss.createQueue(deadLetterOf(name), { name: deadLetterOf(name) });
      const options = {
        name,
        ...deadLetter,
        retryLimit: scheduleOf(name).length,
        retryDelay: config.restartDelaySeconds,
        retryBackoff: false,
        expireInSeconds: config.expireInSeconds,
      };
      await boss.createQueue(name, options);
      // Queues made by an earlier version keep their options unless told (jobs copy them when sent).
      await boss.updateQueue(name, options);
    }
  }

  /**
   * pg-boss retries a failed job after the job's own `retry_delay`, and gives up once
   * `retry_count` reaches `retry_limit`: the worker sets these on the job's row before it
   * reports the failure, which makes pg-boss follow the schedule, one row per job.
   */
  async function setRetry(name: JobName, id: string, change: { delaySeconds: number } | { giveUp: true }) {
    if ("giveUp" in change) {
      await db.executeSql(`UPDATE pgboss.job SET retry_limit = retry_count WHERE name = $1 AND id = $2`, [name, id]);
    } else {
      await db.executeSql(`UPDATE pgboss.job SET retry_delay = $3, retry_backoff = false WHERE name = $1 AND id = $2`, [name, id, change.delaySeconds]);
    }
  }

  /** Jobs the previous process left running go back to the queue at once (sole process only). */
  async function recoverAbandoned() {
    const result = await db.executeSql(
      `UPDATE pgboss.job SET state = 'retry', start_after = now() WHERE name = ANY($1::text[]) AND state = 'active' RETURNING id`,
      [[...queues]],
    );
    const count = result.rows.length;
    if (count > 0) logger.warn({ jobs: count }, "jobs left running by the previous process are tried again");
  }

  async function runJob<N extends JobName>(name: N, job: PgBoss.JobWithMetadata<QueuedPayload<N>>): Promise<{ outcome: "expired" } | void> {
    const entry = handlers.get(name)!;
    const { delivery, ...data } = job.data;
    const parsed = specs.get(name)!.payload.safeParse(data);
    if (!parsed.success) {
      // Retrying cannot mend it (a payload written by another version, or by hand): the job ends
      // now, in the dead-letter queue where its queue keeps one. Paths and codes only: the
      // values may be addresses.
      const attempts = job.retryCount + 1;
      const issues = parsed.error.issues.map((issue) => ({ path: issue.path.join("."), code: issue.code }));
      logger.error({ queue: name, jobId: job.id, issues }, "job payload does not match its schema; the job is not retried");
      await setRetry(name, job.id, { giveUp: true });
      throw new DeliveryFailed("invalid_payload", attempts);
    }
    const payload = parsed.data as JobPayloads[JobName];
    const context: JobContext = { id: delivery?.key ?? job.id, retryCount: job.retryCount, queuedAt: new Date(delivery?.queuedAt ?? job.createdOn) };
    // A retry ran with the schedule's delay set; should this run be cut short, retry soon.
    if (job.retryCount > 0) await setRetry(name, job.id, { delaySeconds: config.restartDelaySeconds });
    const expire = async (attempts: number) => {
      await entry.expiry!.expired(payload, context, attempts);
      logger.info({ queue: name, jobId: job.id, attempts }, "job ended undelivered: its link expired");
      return { outcome: "expired" as const };
    };
    let deadline: Date | null = null;
    try {
      deadline = entry.expiry ? await entry.expiry.deadline(payload, context) : null;
      // Never a mail with a dead link: the job may have waited past the link's expiry.
      if (deadline && deadline.getTime() <= Date.now()) return await expire(job.retryCount);
      await entry.handler(payload, context);
    } catch (error) {
      const attempts = job.retryCount + 1;
      const reason = failureReason(error);
      logger.warn({ queue: name, jobId: job.id, attempt: attempts, reason }, "job failed");
      const decision = isPermanent(error) ? ({ action: "give_up" } as const) : decideRetry(scheduleOf(name), attempts, deadline);
      if (decision.action === "expire") return expire(attempts);
      if (decision.action === "retry") {
        const delaySeconds = Math.max(1, Math.ceil((decision.at.getTime() - Date.now()) / 1000));
        await setRetry(name, job.id, { delaySeconds });
        wakeAt(name, new Date(Date.now() + delaySeconds * 1000));
      } else await setRetry(name, job.id, { giveUp: true });
      throw new DeliveryFailed(reason, attempts);
    }
  }

  let sweeper: NodeJS.Timeout | undefined;

  /** `ids`: these rows (after their commit); none: every row older than `graceMs` (the sweep). */
  async function handOver(ids?: string[], graceMs = OUTBOX_GRACE_MS) {
    await started;
    const rows = await db.prisma.jobOutbox.findMany({
      where: ids ? { id: { in: ids } } : { createdAt: { lt: new Date(Date.now() - graceMs) } },
      orderBy: { createdAt: "asc" },
      take: 100,
    });
    for (const row of rows) {
      // The outbox id is the job's id: a hand-over repeated after a crash inserts nothing.
      await boss.send(row.queue, row.payload as object, { id: row.id });
      await db.prisma.jobOutbox.delete({ where: { id: row.id } }).catch(() => undefined);
    }
    for (const queue of new Set(rows.map((row) => row.queue))) await announce(queue as JobName);
  }

  return {
    async enqueueIn(tx, name, data) {
      const rows = await tx.$queryRaw<Array<{ waiting: number }>>`SELECT count(*)::int AS waiting FROM pgboss.job WHERE name = ${name} AND state < 'active'`;
      const waiting = rows[0]?.waiting ?? 0;
      if (waiting >= config.maxLength) {
        logger.warn({ queue: name, waiting }, "job queue full; job refused");
        return null;
      }
      const id = randomUUID();
      const delivery: Delivery = (data as QueuedPayload<typeof name>).delivery ?? { key: id, queuedAt: new Date().toISOString() };
      await tx.jobOutbox.create({ data: { id, queue: name, payload: { ...data, delivery } as unknown as Prisma.InputJsonValue } });
      return id;
    },
    handOver,
    async enqueue(name, data) {
      await started;
      const waiting = await boss.getQueueSize(name);
      if (waiting >= config.maxLength) {
        logger.warn({ queue: name, waiting }, "job queue full; job refused");
        return null;
      }
      const id = randomUUID();
      const delivery: Delivery = { key: id, queuedAt: new Date().toISOString() };
      const sent = await boss.send(name, { ...data, delivery }, { id });
      await announce(name);
      return sent;
    },
    handle(name, handler, expiry) {
      handlers.set(name, { handler: handler as JobHandler<JobName>, expiry: expiry as ExpiryPolicy<JobName> | undefined });
    },
    start() {
      started ??= (async () => {
        await boss.start();
        await ensureQueues();
        if (config.soleProcess) await recoverAbandoned();
        stopListening = await db.listen(JOBS_CHANNEL, wake);
        for (const name of handlers.keys()) {
          const ids: string[] = [];
          workerIds.set(name, ids);
          for (let i = 0; i < config.concurrency; i++) {
            const worker = { id: "" };
            worker.id = await boss.work<QueuedPayload<typeof name>>(
              name,
              { batchSize: 1, includeMetadata: true, pollingIntervalSeconds: config.pollingIntervalSeconds },
              async ([job]) => {
                if (!job) return undefined;
                // A worker that just finished a job looks for the next one at once: a backlog
                // drains at the workers' pace, not one job per polling interval.
                if (worker.id) boss.notifyWorker(worker.id);
                return runJob(name, job);
              },
            );
            ids.push(worker.id);
          }
        }
        const sweep = (graceMs?: number) =>
          handOver(undefined, graceMs).catch((error: unknown) => logger.warn({ err: { message: (error as Error).message } }, "could not hand over outbox jobs"));
        sweeper = setInterval(sweep, config.outboxSweepSeconds * 1000);
        sweeper.unref();
        // Every row there at start is the previous run's, which it committed but did not hand
        // over (it crashed): it waits for no interval.
        if (config.soleProcess) setImmediate(() => sweep(0));
      })();
      return started;
    },
    async stop() {
      if (!started) return;
      stopped = true;
      clearInterval(sweeper);
      await started.catch(() => undefined);
      await stopListening?.().catch(() => undefined);
      for (const { timer } of retryTimers.values()) clearTimeout(timer);
      retryTimers.clear();
      await boss.stop({ graceful: true, wait: true, timeout: 5_000 });
    },
    retryScheduleOf: scheduleOf,
    queues,
    hasDeadLetterQueue,
    async count(name, state) {
      return state === "dead" ? boss.getQueueSize(deadLetterOf(name)) : boss.getQueueSize(name);
    },
  };
}
