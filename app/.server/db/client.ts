import { EventEmitter } from "node:events";
import { mkdirSync } from "node:fs";
import path from "node:path";
import type { PGlite } from "@electric-sql/pglite";
import { PrismaPg } from "@prisma/adapter-pg";
import pg from "pg";
import { PrismaClient } from "~/generated/prisma/client";
import { AppError, unavailable } from "../errors";

/** A connection that runs raw SQL inside one transaction (migrations, locks, job claims). */
export interface RawTransaction {
  /** Runs a script of one or more statements without parameters. */
  exec(sql: string): Promise<void>;
  query<Row extends Record<string, unknown>>(sql: string, params?: unknown[]): Promise<Row[]>;
}

/**
 * The data layer: Prisma on PostgreSQL when DATABASE_URL is set, Prisma on an embedded PGlite
 * in DATA_DIR otherwise. Callers use `prisma` and never learn which one they have.
 */
export interface Database {
  readonly kind: "postgres" | "pglite";
  readonly prisma: PrismaClient;
  rawTransaction<T>(fn: (tx: RawTransaction) => Promise<T>): Promise<T>;
  /**
   * Raw SQL for libraries that bring their own statements (the job queue). Without values a
   * text may hold several statements; with values it is one parameterized statement.
   */
  executeSql(text: string, values?: unknown[]): Promise<{ rows: unknown[] }>;
  /**
   * Notifications between the processes sharing this database (PostgreSQL LISTEN/NOTIFY; the
   * embedded PGlite has one process, so they stay in it). A handler is also called with "*"
   * after the listening connection was lost and found again: it may have missed messages.
   */
  notify(channel: string, message: string): Promise<void>;
  listen(channel: string, handler: (message: string) => void): Promise<() => Promise<void>>;
  /**
   * One parameterized statement straight to the driver, for the hot paths where Prisma's query
   * building costs more than the statement itself (the durable oidc-provider adapter, decision
   * 057). Observed by `onQuery` like Prisma's statements. Never inside a Prisma transaction.
   */
  query<Row extends Record<string, unknown>>(text: string, values: unknown[]): Promise<Row[]>;
  /**
   * Observes every SQL statement Prisma and `query` send (tests use it to prove what a request did
   * not do, or to EXPLAIN what it did; metrics time it). `params`: Prisma's bound values as JSON.
   */
  onQuery(listener: (sql: string, durationMs: number, params?: string) => void): () => void;
  /** The PostgreSQL pool's connections; undefined on the embedded database (one connection). */
  poolStats?(): { total: number; idle: number; waiting: number };
  /** Resolves when the database answers within the time, rejects otherwise. */
  ping(timeoutMs?: number): Promise<void>;
  /** The embedded database's data directory as one archive (PGlite's `dumpDataDir`); undefined on PostgreSQL. */
  dumpDataDir?(): Promise<Blob>;
  close(): Promise<void>;
}

export interface DatabaseOptions {
  databaseUrl?: string | undefined;
  /** Where the embedded PGlite keeps its files; "memory://" for a throw-away database. */
  pgliteDir?: string;
  /** A data directory (a `dumpDataDir` archive) the embedded PGlite starts from instead of an empty one. */
  pgliteSeed?: Blob | undefined;
  poolSize?: number;
}

/**
 * The database did not answer: to a request the same 503 as `unavailable()`; the reason (which
 * names the database's address) is the private detail, for the logs and the startup message.
 */
export class DatabaseUnavailableError extends AppError {
  declare readonly detail: string;

  constructor(detail: string, options?: { cause?: unknown }) {
    const answer = unavailable();
    super(answer.status, answer.code, answer.message, undefined, answer.headers, { detail, cause: options?.cause });
    this.name = "DatabaseUnavailableError";
  }
}

function withTimeout<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new DatabaseUnavailableError(`${what} did not answer within ${ms} ms`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

export async function openDatabase(options: DatabaseOptions): Promise<Database> {
  return options.databaseUrl
    ? openPostgres(options.databaseUrl, options.poolSize ?? 10)
    : openPglite(options.pgliteDir ?? "memory://", options.pgliteSeed);
}

/**
 * Connects once and disconnects. The entry point calls it before it loads the rest of the
 * server, so that an unreachable DATABASE_URL is reported within a second or two.
 */
export async function assertPostgresReachable(connectionString: string): Promise<void> {
  const client = new pg.Client({ connectionString, connectionTimeoutMillis: 5_000 });
  client.on("error", () => undefined);
  try {
    await withTimeout(client.connect(), 6_000, "PostgreSQL");
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    throw new DatabaseUnavailableError(`cannot connect to PostgreSQL at ${describePostgresTarget(connectionString)}: ${reason}`, { cause: error });
  } finally {
    await client.end().catch(() => undefined);
  }
}

async function openPostgres(connectionString: string, max: number): Promise<Database> {
  const pool = new pg.Pool({ connectionString, max, connectionTimeoutMillis: 5_000, idleTimeoutMillis: 30_000 });
  // An idle client losing its server must not crash the process; the next query reports it.
  pool.on("error", () => undefined);
  try {
    await withTimeout(pool.query("SELECT 1"), 6_000, "PostgreSQL");
  } catch (error) {
    await pool.end().catch(() => undefined);
    const target = describePostgresTarget(connectionString);
    const reason = error instanceof Error ? error.message : String(error);
    throw new DatabaseUnavailableError(`cannot connect to PostgreSQL at ${target}: ${reason}`, { cause: error });
  }
  const prisma = new PrismaClient({ adapter: new PrismaPg(pool), log: [{ emit: "event", level: "query" }] });
  const { onQuery, observed } = queryObservers(prisma);
  const listener = createListener(connectionString);
  return {
    kind: "postgres",
    prisma,
    onQuery,
    query: (text, values) => observed(text, async () => (await pool.query(text, values)).rows),
    poolStats: () => ({ total: pool.totalCount, idle: pool.idleCount, waiting: pool.waitingCount }),
    async notify(channel, message) {
      await pool.query("SELECT pg_notify($1::text, $2::text)", [channel, message]);
    },
    listen: listener.listen,
    async executeSql(text, values) {
      const result = await pool.query(text, values);
      // A multi-statement text yields one result per statement; the last one is the answer.
      const last = Array.isArray(result) ? (result[result.length - 1] as pg.QueryResult | undefined) : result;
      return { rows: last?.rows ?? [] };
    },
    async rawTransaction(fn) {
      const client = await pool.connect();
      try {
        await client.query("BEGIN");
        const result = await fn({
          exec: async (sql) => {
            await client.query(sql);
          },
          query: async <Row extends Record<string, unknown>>(sql: string, params?: unknown[]) =>
            (await client.query(sql, params)).rows as Row[],
        });
        await client.query("COMMIT");
        return result;
      } catch (error) {
        await client.query("ROLLBACK").catch(() => undefined);
        throw error;
      } finally {
        client.release();
      }
    },
    async ping(timeoutMs = 1_000) {
      await withTimeout(pool.query("SELECT 1"), timeoutMs, "PostgreSQL");
    },
    async close() {
      await listener.close();
      await prisma.$disconnect().catch(() => undefined);
      await pool.end().catch(() => undefined);
    },
  };
}

/**
 * One connection that LISTENs for every channel a process subscribes to. It reconnects with a
 * growing pause for as long as PostgreSQL stays away, LISTENs again, and then tells each
 * handler "*": messages sent while it was not listening are lost.
 */
function createListener(connectionString: string) {
  const handlers = new Map<string, Set<(message: string) => void>>();
  let client: pg.Client | undefined;
  let connecting: Promise<pg.Client | undefined> | undefined;
  let retry: NodeJS.Timeout | undefined;
  let closed = false;
  let attempt = 0;
  /** Whether messages may have gone unheard since the handlers last heard one. */
  let missed = false;

  const quote = (channel: string) => `"${channel.replace(/"/g, '""')}"`;
  const tellAll = (message: string) => {
    for (const set of handlers.values()) for (const handler of set) handler(message);
  };

  async function connect(): Promise<pg.Client | undefined> {
    if (closed) return undefined;
    const next = new pg.Client({ connectionString, connectionTimeoutMillis: 5_000 });
    next.on("notification", (event) => {
      for (const handler of handlers.get(event.channel) ?? []) handler(event.payload ?? "");
    });
    next.on("error", () => undefined);
    next.on("end", () => {
      if (client !== next) return;
      client = undefined;
      missed = true;
      reconnectLater();
    });
    try {
      await next.connect();
      for (const channel of handlers.keys()) await next.query(`LISTEN ${quote(channel)}`);
      client = next;
      attempt = 0;
      if (missed) {
        missed = false;
        tellAll("*");
      }
      return next;
    } catch {
      if (handlers.size > 0) missed = true;
      await next.end().catch(() => undefined);
      reconnectLater();
      return undefined;
    }
  }

  function reconnectLater() {
    if (closed || retry) return;
    attempt += 1;
    retry = setTimeout(() => {
      retry = undefined;
      if (client || connecting) return;
      connecting = connect().finally(() => (connecting = undefined));
    }, Math.min(attempt * 250, 2_000));
    retry.unref();
  }

  return {
    async listen(channel: string, handler: (message: string) => void) {
      const set = handlers.get(channel) ?? new Set();
      const fresh = set.size === 0;
      set.add(handler);
      handlers.set(channel, set);
      const current = client ?? (await (connecting ??= connect().finally(() => (connecting = undefined))));
      if (fresh && current) await current.query(`LISTEN ${quote(channel)}`).catch(() => undefined);
      return async () => {
        set.delete(handler);
        if (set.size === 0) {
          handlers.delete(channel);
          await client?.query(`UNLISTEN ${quote(channel)}`).catch(() => undefined);
        }
      };
    },
    async close() {
      closed = true;
      clearTimeout(retry);
      const current = client;
      client = undefined;
      await current?.end().catch(() => undefined);
    },
  };
}

/**
 * PostgreSQL's 128 MB of shared buffers fill the embedded process's WebAssembly memory, which
 * never shrinks; the operating system's page cache keeps the files warm behind a smaller pool.
 * Measured in docs/benchmarks.md ("Memory").
 */
export const PGLITE_SETTINGS = ["shared_buffers = 32MB"];

/**
 * Plain SQL answers on the embedded database as node-postgres answers them on PostgreSQL, so that
 * code reading rows never learns which one it has: 64-bit integers and numerics as strings (PGlite
 * would give numbers, losing precision past 2^53). test/store-contract.test.ts compares the two.
 */
const AS_NODE_POSTGRES = { parsers: { 20: (value: string) => value, 1700: (value: string) => value } };

async function openPglite(dataDir: string, seed?: Blob): Promise<Database> {
  if (!dataDir.startsWith("memory://")) mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  // Loaded only here: a server on PostgreSQL never pays for PGlite's code (decision 056).
  const [{ PGlite }, { citext }, { pg_trgm }, { PrismaPGlite }] = await Promise.all([
    import("@electric-sql/pglite"),
    import("@electric-sql/pglite/contrib/citext"),
    import("@electric-sql/pglite/contrib/pg_trgm"),
    import("pglite-prisma-adapter"),
  ]);
  let db: PGlite;
  try {
    db = await PGlite.create(dataDir.startsWith("memory://") ? dataDir : path.resolve(dataDir), {
      // citext for slugs and emails; pg_trgm for the organization search index (decision 030).
      extensions: { citext, pg_trgm },
      postgresqlconf: PGLITE_SETTINGS,
      ...(seed ? { loadDataDir: seed } : {}),
    });
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    throw new DatabaseUnavailableError(`cannot open the embedded database in ${dataDir}: ${reason}`, { cause: error });
  }
  const prisma = new PrismaClient({ adapter: new PrismaPGlite(db), log: [{ emit: "event", level: "query" }] });
  const { onQuery, observed } = queryObservers(prisma);
  // One process holds the embedded database: notifications never need to leave it.
  const bus = new EventEmitter();
  bus.setMaxListeners(0);
  return {
    kind: "pglite",
    prisma,
    onQuery,
    query: (text, values) => observed(text, async () => (await db.query(text, values, AS_NODE_POSTGRES)).rows),
    async notify(channel, message) {
      bus.emit(channel, message);
    },
    async listen(channel, handler) {
      bus.on(channel, handler);
      // A statement may notify too (a value written with its announcement, KeyValueStore.set).
      const stopStatements = await db.listen(channel, handler);
      return async () => {
        bus.off(channel, handler);
        await stopStatements().catch(() => undefined);
      };
    },
    async executeSql(text, values) {
      if (values && values.length > 0) return { rows: (await db.query(text, values, AS_NODE_POSTGRES)).rows };
      const results = await db.exec(text, AS_NODE_POSTGRES);
      return { rows: results[results.length - 1]?.rows ?? [] };
    },
    rawTransaction(fn) {
      return db.transaction((tx) =>
        fn({
          exec: async (sql) => {
            await tx.exec(sql);
          },
          query: async <Row extends Record<string, unknown>>(sql: string, params?: unknown[]) =>
            (await tx.query<Row>(sql, params, AS_NODE_POSTGRES)).rows,
        }),
      );
    },
    async ping(timeoutMs = 1_000) {
      await withTimeout(db.query("SELECT 1"), timeoutMs, "the embedded database");
    },
    dumpDataDir: () => db.dumpDataDir("none"),
    async close() {
      await prisma.$disconnect().catch(() => undefined);
      if (!db.closed) await db.close();
    },
  };
}

type QueryLoggingClient = PrismaClient<"query">;

function queryObservers(prisma: QueryLoggingClient) {
  const listeners = new Set<(sql: string, durationMs: number, params?: string) => void>();
  const tell = (sql: string, durationMs: number, params?: string) => {
    for (const listener of listeners) listener(sql, durationMs, params);
  };
  prisma.$on("query", (event) => tell(event.query, event.duration, event.params));
  const onQuery: Database["onQuery"] = (listener) => {
    listeners.add(listener);
    return () => listeners.delete(listener);
  };
  /** Runs one statement of `query`, told to the listeners once it answered. */
  async function observed<Row>(sql: string, run: () => Promise<unknown[]>): Promise<Row[]> {
    const started = performance.now();
    const rows = await run();
    if (listeners.size > 0) tell(sql, performance.now() - started);
    return rows as Row[];
  }
  return { onQuery, observed };
}

/** host:port/database of a connection string, without credentials, for error messages. */
export function describePostgresTarget(connectionString: string): string {
  try {
    const url = new URL(connectionString);
    return `${url.hostname}:${url.port || "5432"}${url.pathname}`;
  } catch {
    return "(unparseable DATABASE_URL)";
  }
}
