import PgBoss from "pg-boss";
import type { Logger } from "pino";
import { randomUUID } from "node:crypto";
import type { Prisma } from "~/generated/prisma/client";
import type { Db } from "../context";
import type { Database } from "../db/client";

/**
 * Porta's durable background work, on pg-boss: jobs are rows in PostgreSQL (or the embedded
 * PGlite, through the same connection the app uses), claimed with SKIP LOCKED so several
 * processes share one queue without double work, retried with exponential backoff, and moved
 * to a dead-letter queue after the last failed attempt. Each queue has a bounded number of
 * local workers and a bounded length: a full queue refuses new jobs instead of growing.
 */
export interface JobPayloads {
  "magic-link": {
    organizationId: string;
    email: string;
    interactionUid: string | null;
    clientId: string | null;
    language: string;
    ip: string | null;
  };
  "password-reset": { organizationId: string; email: string; interactionUid: string | null; language: string; ip: string | null };
  invitation: { invitationId: string; language: string };
  "email-otp": { userId: string; codeId: string; language: string };
}

export type JobName = keyof JobPayloads;

export interface JobContext {
  id: string;
  /** How many earlier attempts of this job failed (0 on the first run). */
  retryCount: number;
}

export type JobHandler<N extends JobName> = (data: JobPayloads[N], job: JobContext) => Promise<void>;

export interface QueueSettings {
  /** Local workers per queue. */
  concurrency: number;
  /** Jobs waiting or running beyond which `enqueue` refuses. */
  maxLength: number;
  retryLimit: number;
  retryDelaySeconds: number;
  /** A running job that takes longer is failed (and retried). */
  expireInSeconds: number;
  pollingIntervalSeconds: number;
}

export const DEFAULT_QUEUE_SETTINGS: QueueSettings = {
  concurrency: 2,
  maxLength: 10_000,
  retryLimit: 5,
  retryDelaySeconds: 5,
  expireInSeconds: 120,
  pollingIntervalSeconds: 0.5,
};

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
  /** Registers the handler of a queue; work starts with `start`. */
  handle<N extends JobName>(name: N, handler: JobHandler<N>): void;
  start(): Promise<void>;
  stop(): Promise<void>;
  /** Jobs of a queue in a given state (tests and the admin statistics). */
  count(name: JobName, state: "waiting" | "dead"): Promise<number>;
}

const QUEUES: JobName[] = ["magic-link", "password-reset", "invitation", "email-otp"];
/** Outbox rows older than this are handed over by the sweeper (younger ones are their commit's). */
const OUTBOX_GRACE_MS = 5_000;
const OUTBOX_SWEEP_MS = 10_000;
const deadLetterOf = (name: string) => `${name}.dead`;

export function createJobQueue(db: Database, logger: Logger, settings: Partial<QueueSettings> = {}): JobQueue {
  const config = { ...DEFAULT_QUEUE_SETTINGS, ...settings };
  const boss = new PgBoss({
    db: { executeSql: (text, values) => db.executeSql(text, values) },
    schema: "pgboss",
    retryLimit: config.retryLimit,
    retryDelay: config.retryDelaySeconds,
    retryBackoff: true,
    expireInSeconds: config.expireInSeconds,
    // Finished jobs are kept a week for inspection, then removed by pg-boss's maintenance.
    deleteAfterDays: 7,
  });
  boss.on("error", (error: Error) => logger.error({ err: { message: error.message } }, "job queue error"));
  const handlers = new Map<JobName, JobHandler<JobName>>();
  let started: Promise<void> | undefined;

  async function ensureQueues() {
    for (const name of QUEUES) {
      await boss.createQueue(deadLetterOf(name), { name: deadLetterOf(name) });
      await boss.createQueue(name, {
        name,
        deadLetter: deadLetterOf(name),
        retryLimit: config.retryLimit,
        retryDelay: config.retryDelaySeconds,
        retryBackoff: true,
        expireInSeconds: config.expireInSeconds,
      });
    }
  }

  let sweeper: NodeJS.Timeout | undefined;

  async function handOver(ids?: string[]) {
    await started;
    const rows = await db.prisma.jobOutbox.findMany({
      where: ids ? { id: { in: ids } } : { createdAt: { lt: new Date(Date.now() - OUTBOX_GRACE_MS) } },
      orderBy: { createdAt: "asc" },
      take: 100,
    });
    for (const row of rows) {
      // The outbox id is the job's id: a hand-over repeated after a crash inserts nothing.
      await boss.send(row.queue, row.payload as object, { id: row.id });
      await db.prisma.jobOutbox.delete({ where: { id: row.id } }).catch(() => undefined);
    }
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
      await tx.jobOutbox.create({ data: { id, queue: name, payload: data as unknown as Prisma.InputJsonValue } });
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
      return boss.send(name, data as object);
    },
    handle(name, handler) {
      handlers.set(name, handler as JobHandler<JobName>);
    },
    start() {
      started ??= (async () => {
        await boss.start();
        await ensureQueues();
        for (const [name, handler] of handlers) {
          for (let i = 0; i < config.concurrency; i++) {
            await boss.work<JobPayloads[typeof name]>(
              name,
              { batchSize: 1, includeMetadata: true, pollingIntervalSeconds: config.pollingIntervalSeconds },
              async ([job]) => {
                if (!job) return;
                try {
                  await handler(job.data, { id: job.id, retryCount: job.retryCount });
                } catch (error) {
                  logger.warn({ queue: name, jobId: job.id, attempt: job.retryCount + 1, err: { message: (error as Error).message } }, "job failed");
                  throw error;
                }
              },
            );
          }
        }
        sweeper = setInterval(() => {
          handOver().catch((error: unknown) => logger.warn({ err: { message: (error as Error).message } }, "could not hand over outbox jobs"));
        }, OUTBOX_SWEEP_MS);
        sweeper.unref();
      })();
      return started;
    },
    async stop() {
      if (!started) return;
      clearInterval(sweeper);
      await started.catch(() => undefined);
      await boss.stop({ graceful: true, wait: true, timeout: 5_000 });
    },
    async count(name, state) {
      return state === "dead" ? boss.getQueueSize(deadLetterOf(name)) : boss.getQueueSize(name);
    },
  };
}
