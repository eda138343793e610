import type { Logger } from "pino";
import type { Prisma } from "~/generated/prisma/client";
import type { PackageSeal } from "./admin/transfer/package-seal";
import type { AuditLog, AuditRecord } from "./audit/audit";
import type { BotChallenges } from "./bot-challenge/challenges";
import type { CsrfGuard } from "./auth/csrf";
import type { PasswordHasher } from "./auth/password-hash";
import type { OtpMint } from "./auth/two-factor/email-otp";
import type { ReadThroughCache } from "./cache/read-through";
import type { KeyValueStore } from "./cache/store";
import type { Config } from "./config/env";
import type { Encrypter } from "./crypto/encryption";
import type { TokenMint } from "./crypto/tokens";
import type { Database } from "./db/client";
import type { DnsResolver } from "./domains/dns";
import type { Readiness } from "./health/readiness";
import type { JobName, JobPayloads, JobQueue } from "./jobs/queue";
import type { Mailer } from "./mail/mailer";
import type { Metrics } from "./metrics/metrics";
import type { LogoutNotices } from "./oidc/features/backchannel-logout";
import type { KeyService } from "./oidc/provider/keys";
import type { MetadataDocumentClients } from "./oidc/storage/client-metadata-documents";
import type { ProviderRegistry } from "./oidc/provider/tenant-provider";
import type { RateLimits } from "./rate-limit/limiters";
import type { Settings } from "./settings/settings";
import type { Tracing } from "./tracing/tracing";

/**
 * What a service is handed for one unit of work: the database (inside a write, the write's
 * transaction), who acts, and the few collaborators it asks for. Audit entries and jobs go
 * through the context, so they commit with the write or not at all; effects outside the
 * database (cache and provider invalidation, ending sessions in the store) wait for the commit.
 */
export type Db = Prisma.TransactionClient;

export interface Actor {
  type: AuditRecord["actorType"];
  id: string | null;
  ip: string | null;
  requestId: string | null;
}

/** An audit entry as a service states it; the context adds who acted, from where. */
export type AuditEntry = Omit<AuditRecord, "actorType" | "actorId" | "ip" | "requestId">;

/**
 * The collaborators a service may ask for, built once in services.ts (whose `Services` bag is
 * these and what the builders below take besides). Named here from their own modules, none of
 * which imports this one: a service module may import the context without closing a circle.
 */
export interface Collaborators {
  config: Config;
  logger: Logger;
  store: KeyValueStore;
  cache: ReadThroughCache;
  encrypter: Encrypter;
  keys: KeyService;
  oidc: ProviderRegistry;
  limits: RateLimits;
  passwords: PasswordHasher;
  csrf: CsrfGuard;
  mailer: Mailer;
  tokens: TokenMint;
  otp: OtpMint;
  /** Signs export packages and seals the secrets inside them. */
  packageSeal: PackageSeal;
  /** Queues logout tokens for the clients of sessions that ended (decision 048). */
  logoutNotices: LogoutNotices;
  settings: Settings;
  /** Prometheus metrics (decision 050): what the collaborators above count, read at scrape time. */
  metrics: Metrics;
  /** OpenTelemetry traces (decision 051); spans cost nothing while no endpoint is set. */
  tracing: Tracing;
  /** What `/health/ready` answers (health/readiness.ts); draining from SIGTERM on. */
  readiness: Readiness;
  /**
   * The release label (package.json's version), read in services.ts because only the source and
   * the compiled server know where package.json is; Remix's server build gets it from there.
   */
  release: string;
  /** Client ID metadata documents, fetched through the outbound guard and kept (oidc/storage/client-metadata-documents.ts). */
  clientDocuments: MetadataDocumentClients;
  /** TXT look-ups that prove an organization's domains (decision 086); tests hand a fake one. */
  dnsResolver: DnsResolver;
  /** Proof-of-work challenges of the sign-in forms (decision 091), used once through `store`. */
  botChallenges: BotChallenges;
}
export type CollaboratorName = keyof Collaborators;

/**
 * What the builders below make a context from: the collaborators, and the database, audit log
 * and job queue behind a unit of work. The `Services` bag (services.ts) is one.
 */
export interface ContextSource extends Collaborators {
  db: Database;
  audit: AuditLog;
  jobs: JobQueue;
  /** Test-only fault injection (FaultHooks); never set in production. */
  faults?: FaultHooks;
  /** How long a write waits for its transaction to start (default TRANSACTION_MAX_WAIT_MS). */
  transactionMaxWaitMs?: number;
  close(): Promise<void>;
}

export interface UnitOfWork {
  db: Db;
  actor: Actor;
  /** Records an audit entry; it is written with the write's other rows, in the same transaction. */
  audit(entry: AuditEntry): void;
  /** Enqueues a job in the same transaction: it runs only if the write commits. */
  enqueue<N extends JobName>(name: N, data: JobPayloads[N]): Promise<string | null>;
  /** Runs once the transaction has committed (never after a rollback). */
  afterCommit(effect: () => unknown): void;
}

/** A service's context: the unit of work plus exactly the collaborators it names. */
export type Context<C extends CollaboratorName = never> = UnitOfWork & Pick<Collaborators, C>;
/** What route helpers build and hand down; every narrower Context accepts it. */
export type FullContext = Context<CollaboratorName>;

/**
 * The runner of a unit's writes, which the door provides: one transaction per call, its effects
 * after the commit. A write acts as the context's actor, or as one the service names: the user a
 * sign-in step proved, the account an invitation creates, the address a job acts for.
 */
export interface UnitRunner<C extends CollaboratorName = never> {
  transaction<T>(work: (ctx: Context<C>) => Promise<T>): Promise<T>;
  transaction<T>(actor: Actor, work: (ctx: Context<C>) => Promise<T>): Promise<T>;
}

/**
 * For a service that checks outside a transaction and writes in one (the account page checks a
 * password, a step-up or the sessions in the store first, then writes; a sign-in step verifies a
 * hash or a signature first): its reads go through `db` without a transaction (it may not audit or
 * enqueue there), and `transaction` runs each write's unit of work. The door builds it
 * (`stagedContext`), the way the Admin API's `runOperation` picks the transaction, so that no
 * service opens one itself.
 */
export type StagedContext<C extends CollaboratorName = never> = Context<C> & UnitRunner<C>;

/** What a job's handler is handed (the job table builds it once): a staged context acting as the system, and the queue's retry schedules. */
export type JobServiceContext<C extends CollaboratorName = never> = StagedContext<C> & {
  retryScheduleOf(name: JobName): readonly number[];
};

/** Test-only faults: a hook that throws between a write and its audit entry proves they commit together. */
export interface FaultHooks {
  beforeAudit?: () => void;
  /** Throws after the audit entries and their webhook deliveries were written, before the commit. */
  afterAudit?: () => void;
}

/**
 * The time an entry was stated, strictly increasing within the process: entries written together
 * keep the order in which they happened (history pages sort by time, then id).
 */
let lastAuditAt = 0;
function auditTime(): Date {
  lastAuditAt = Math.max(Date.now(), lastAuditAt + 1);
  return new Date(lastAuditAt);
}

function contextOf(services: ContextSource, db: Db, actor: Actor, audits: AuditEntry[], effects: Array<() => unknown>): FullContext {
  const { db: _db, audit: _audit, jobs, close: _close, faults: _faults, ...collaborators } = services;
  return {
    ...collaborators,
    // Settings read inside a write must use the write's connection (PGlite has only one).
    settings: services.settings.within(db),
    db,
    actor,
    audit: (entry) => void audits.push({ ...entry, at: auditTime() }),
    enqueue: async (name, data) => {
      const id = await jobs.enqueueIn(db, name, data);
      if (id) effects.push(() => jobs.handOver([id]));
      return id;
    },
    afterCommit: (effect) => void effects.push(effect),
  };
}

async function runEffects(services: ContextSource, effects: Array<() => unknown>) {
  for (const effect of effects) {
    try {
      await effect();
    } catch (error) {
      // The write is committed; a cache that could not be told expires on its own.
      services.logger.warn({ err: error }, "an effect after commit failed");
    }
  }
}

/**
 * How long a write waits for its transaction to start (a connection and its BEGIN). Past it,
 * Prisma gives up ("Unable to start a transaction in the given time"): the database is too busy
 * to answer, a 503 with Retry-After like its absence (db/errors.ts).
 */
export const TRANSACTION_MAX_WAIT_MS = 10_000;

/**
 * Runs `work` in one transaction with a context over it: the write, its audit entries and its
 * jobs commit together, and the effects outside the database run after the commit.
 */
export async function inTransaction<T>(
  services: ContextSource,
  actor: Actor,
  work: (ctx: FullContext) => Promise<T>,
  options: { timeoutMs?: number | undefined } = {},
): Promise<T> {
  const effects: Array<() => unknown> = [];
  const result = await services.db.prisma.$transaction(
    async (tx) => {
      const audits: AuditEntry[] = [];
      const value = await work(contextOf(services, tx, actor, audits, effects));
      if (audits.length > 0) {
        services.faults?.beforeAudit?.();
        // The webhook deliveries the entries cause are written with them (decision 047).
        const jobIds = await services.audit.recordMany(audits.map((entry) => ({ ...entry, actorType: actor.type, actorId: actor.id, ip: actor.ip, requestId: actor.requestId })), tx);
        if (jobIds.length > 0) effects.push(() => services.jobs.handOver(jobIds));
        services.faults?.afterAudit?.();
      }
      return value;
    },
    { timeout: options.timeoutMs ?? 60_000, maxWait: services.transactionMaxWaitMs ?? TRANSACTION_MAX_WAIT_MS },
  );
  await runEffects(services, effects);
  return result;
}

/** A context for reads: no transaction, and nothing to audit or enqueue. */
export function readContext(services: ContextSource, actor: Actor): FullContext {
  const ctx = contextOf(services, services.db.prisma, actor, [], []);
  return {
    ...ctx,
    audit: () => {
      throw new Error("a read cannot write an audit entry; run it with withReadContext or in a transaction");
    },
    enqueue: () => Promise.reject(new Error("a read cannot enqueue a job; run it in a transaction")),
    afterCommit: (effect) => void Promise.resolve().then(effect),
  };
}

/**
 * Runs a read that may record who read what (exports are audited): no transaction, since the
 * read changes nothing; its audit entries are written once it succeeded.
 */
export async function withReadContext<T>(services: ContextSource, actor: Actor, work: (ctx: FullContext) => Promise<T>): Promise<T> {
  const audits: AuditEntry[] = [];
  const ctx = readContext(services, actor);
  const value = await work({ ...ctx, audit: (entry) => void audits.push({ ...entry, at: auditTime() }) });
  if (audits.length > 0) {
    // Its own transaction: the entries and the webhook deliveries they cause are written together.
    const entries = audits.map((entry) => ({ ...entry, actorType: actor.type, actorId: actor.id, ip: actor.ip, requestId: actor.requestId }));
    const jobIds = await services.db.prisma.$transaction((tx) => services.audit.recordMany(entries, tx));
    if (jobIds.length > 0) await runEffects(services, [() => services.jobs.handOver(jobIds)]);
  }
  return value;
}

/** What a door hands a service that reads first and writes later (StagedContext): a read context, and writes in a transaction, as `actor` unless the write names another. */
export function stagedContext(services: ContextSource, actor: Actor): StagedContext<CollaboratorName> {
  function transaction<T>(work: (ctx: FullContext) => Promise<T>): Promise<T>;
  function transaction<T>(as: Actor, work: (ctx: FullContext) => Promise<T>): Promise<T>;
  function transaction<T>(first: Actor | ((ctx: FullContext) => Promise<T>), work?: (ctx: FullContext) => Promise<T>): Promise<T> {
    return typeof first === "function" ? inTransaction(services, actor, first) : inTransaction(services, first, work!);
  }
  return { ...readContext(services, actor), transaction };
}

/** Who acts in a job: the system, with no request behind it. */
const SYSTEM: Actor = { type: "system", id: null, ip: null, requestId: null };

/** The job table's context for the handlers it registers (JobServiceContext). */
export function jobServiceContext(services: ContextSource): JobServiceContext<CollaboratorName> {
  return { ...stagedContext(services, SYSTEM), retryScheduleOf: (name) => services.jobs.retryScheduleOf(name) };
}
