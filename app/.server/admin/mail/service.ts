import { Prisma } from "~/generated/prisma/client";
import type { Context, Db } from "../../context";
import { conflict, notFound } from "../../errors";
import { deadLetterOf, type JobPayloads, type QueuedPayload } from "../../jobs/queue";
import { describeMailJob, MAIL_QUEUES, type MailJobName } from "../../mail/mail-jobs";
import type { Page } from "../http/pagination";

/**
 * The dead-letter queue of mail: jobs that used every retry of the schedule (or were refused
 * for good, or kept being abandoned by crashing workers). pg-boss keeps a copy of each in
 * `<queue>.dead`, with the payload and the last attempt's error (reason and attempts only).
 * Re-driving one puts its payload back in its queue as a new job with the same delivery key, so
 * it carries the same link; a link that has expired meanwhile is refused instead of sent.
 */
export interface DeadMail {
  id: string;
  kind: MailJobName;
  organizationId: string | null;
  userId: string | null;
  email: string | null;
  reason: string;
  attempts: number | null;
  failedAt: Date;
  linkExpiresAt: Date | null;
  linkExpired: boolean;
}

interface DeadRow {
  id: string;
  name: string;
  data: QueuedPayload<MailJobName>;
  output: unknown;
  created_on: Date;
}

const DEAD_QUEUES = MAIL_QUEUES.map(deadLetterOf);
const kindOf = (name: string) => MAIL_QUEUES.find((q) => deadLetterOf(q) === name)!;
/** At most this many are re-driven by one "re-drive all" (the rest by the next). */
export const REDRIVE_ALL_LIMIT = 500;

function failureOf(output: unknown): { reason: string; attempts: number | null } {
  const o = (output ?? {}) as { reason?: unknown; attempts?: unknown; value?: { message?: unknown } };
  if (typeof o.reason === "string") return { reason: o.reason, attempts: typeof o.attempts === "number" ? o.attempts : null };
  // pg-boss's own words when a worker never finished (crashed or stopped, repeatedly).
  return { reason: "abandoned", attempts: null };
}

async function toDeadMail(ctx: Context<"settings">, row: DeadRow, now: Date): Promise<DeadMail> {
  const kind = kindOf(row.name);
  const { delivery, ...payload } = row.data;
  const subject = await describeMailJob(ctx.db, ctx.settings, kind, payload as JobPayloads[typeof kind], {
    id: delivery?.key ?? row.id,
    queuedAt: new Date(delivery?.queuedAt ?? row.created_on),
  });
  return {
    id: row.id,
    kind,
    organizationId: subject.organizationId,
    userId: subject.userId,
    email: subject.email,
    ...failureOf(row.output),
    failedAt: row.created_on,
    linkExpiresAt: subject.deadline,
    linkExpired: subject.deadline !== null && subject.deadline <= now,
  };
}

const deadQueues = (kind: MailJobName | undefined) => Prisma.join(kind ? [deadLetterOf(kind)] : DEAD_QUEUES);

export async function listDeadMail(ctx: Context<"settings">, query: { page?: number | undefined; pageSize?: number | undefined; kind?: MailJobName | undefined }): Promise<Page<DeadMail>> {
  const page = query.page ?? 1;
  const pageSize = query.pageSize ?? 20;
  const [{ total } = { total: 0 }] = await ctx.db.$queryRaw<Array<{ total: number }>>`
    SELECT count(*)::int AS total FROM pgboss.job WHERE name IN (${deadQueues(query.kind)}) AND state = 'created'`;
  const rows = await ctx.db.$queryRaw<DeadRow[]>`
    SELECT id::text AS id, name, data, output, created_on FROM pgboss.job
    WHERE name IN (${deadQueues(query.kind)}) AND state = 'created'
    ORDER BY created_on DESC, id DESC LIMIT ${pageSize} OFFSET ${(page - 1) * pageSize}`;
  const now = new Date();
  const data: DeadMail[] = [];
  for (const row of rows) data.push(await toDeadMail(ctx, row, now));
  return { data, total, page, pageSize };
}

async function takeDead(db: Db, ids: string[] | "all"): Promise<DeadRow[]> {
  return ids === "all"
    ? db.$queryRaw<DeadRow[]>`
        SELECT id::text AS id, name, data, output, created_on FROM pgboss.job
        WHERE name IN (${deadQueues(undefined)}) AND state = 'created'
        ORDER BY created_on, id LIMIT ${REDRIVE_ALL_LIMIT} FOR UPDATE SKIP LOCKED`
    : db.$queryRaw<DeadRow[]>`
        SELECT id::text AS id, name, data, output, created_on FROM pgboss.job
        WHERE name IN (${deadQueues(undefined)}) AND state = 'created' AND id::text IN (${Prisma.join(ids)})
        FOR UPDATE`;
}

export interface Redriven {
  mail: DeadMail;
  outcome: "redriven" | "link_expired" | "queue_full";
}

/**
 * Moves dead mail back to its queue in the caller's transaction: the dead copy goes, an outbox
 * row (handed to the queue after the commit) comes. A mail whose link has expired stays where
 * it is, and is reported as such.
 */
export async function redriveDeadMail(ctx: Context<"settings">, ids: string[] | "all"): Promise<Redriven[]> {
  const rows = await takeDead(ctx.db, ids);
  const now = new Date();
  const results: Redriven[] = [];
  for (const row of rows) {
    const mail = await toDeadMail(ctx, row, now);
    if (mail.linkExpired) {
      results.push({ mail, outcome: "link_expired" });
      continue;
    }
    const jobId = await ctx.enqueue(mail.kind, row.data);
    if (!jobId) {
      results.push({ mail, outcome: "queue_full" });
      continue;
    }
    await ctx.db.$executeRaw`DELETE FROM pgboss.job WHERE name = ${row.name} AND id::text = ${row.id}`;
    results.push({ mail, outcome: "redriven" });
  }
  return results;
}

/** One dead mail, re-driven; 404 when it is not in the dead-letter queue, 409 when its link expired. */
export async function redriveOneDeadMail(ctx: Context<"settings">, id: string): Promise<DeadMail> {
  const [result] = await redriveDeadMail(ctx, [id]);
  if (!result) throw notFound("dead mail");
  if (result.outcome === "link_expired") throw conflict("link_expired", "The link or code this mail carries has expired; it is not sent again. The person can ask for a new one.");
  if (result.outcome === "queue_full") throw conflict("queue_full", "The mail queue is full; try again later.");
  return result.mail;
}
