import type { IncomingMessage, RequestListener, ServerResponse } from "node:http";
import { context, propagation, SpanKind, SpanStatusCode, trace, type Attributes, type Span } from "@opentelemetry/api";
import type { CacheStore } from "../cache/store";
import type { Database } from "../db/client";
import type { JobQueue } from "../jobs/queue";
import { wrapSend, type Mailer } from "../mail/mailer";
import { routeLabel } from "../metrics/route-label";

/**
 * OpenTelemetry traces (decision 051), off unless OTEL_EXPORTER_OTLP_ENDPOINT is set. Porta makes
 * its spans through @opentelemetry/api; without the endpoint the SDK is never loaded and nothing
 * is wrapped.
 */
export interface Tracing {
  readonly enabled: boolean;
  /** A server span per request (continuing an incoming `traceparent`), named by route template. */
  observeHttp(handler: RequestListener): RequestListener;
  observeCache(store: CacheStore): CacheStore;
  /** Spans for the statements sent past Prisma (`Database.query`); Prisma's own come from its instrumentation. */
  observeDatabase(db: Database): Database;
  observeJobs(jobs: JobQueue): JobQueue;
  observeMailer(mailer: Mailer): Mailer;
  /** Sends what is buffered (tests; shutdown does it too). */
  flush(): Promise<void>;
  shutdown(): Promise<void>;
}

export interface TracingOptions {
  /** OTLP/HTTP base URL; traces go to `{endpoint}/v1/traces`. */
  endpoint: string | undefined;
  serviceName: string;
  serviceVersion: string;
}

const tracer = () => trace.getTracer("porta");

/** Runs `fn` in a child span of the active one; an error marks the span and goes on. */
export async function inSpan<T>(name: string, attributes: Attributes, fn: (span: Span) => Promise<T>, kind: SpanKind = SpanKind.INTERNAL): Promise<T> {
  return tracer().startActiveSpan(name, { kind, attributes }, async (span) => {
    try {
      return await fn(span);
    } catch (error) {
      span.setStatus({ code: SpanStatusCode.ERROR, message: error instanceof Error ? error.name : "error" });
      throw error;
    } finally {
      span.end();
    }
  });
}

/** Without an endpoint nothing is wrapped: requests, cache reads and jobs pay nothing for traces. */
const OFF: Tracing = {
  enabled: false,
  observeHttp: (handler) => handler,
  observeCache: (store) => store,
  observeDatabase: (db) => db,
  observeJobs: (jobs) => jobs,
  observeMailer: (mailer) => mailer,
  flush: async () => {},
  shutdown: async () => {},
};

export async function startTracing(options: TracingOptions): Promise<Tracing> {
  if (!options.endpoint) return OFF;
  // Loaded only when traces are wanted: the SDK and exporter cost memory at idle otherwise.
  const [{ TracerProvider, BatchSpanProcessor }, { AsyncLocalStorageContextManager }, { W3CTraceContextPropagator }, { OTLPTraceExporter }, { resourceFromAttributes }, { PrismaInstrumentation }] = await Promise.all([
    import("@opentelemetry/sdk-trace"),
    import("@opentelemetry/context-async-hooks"),
    import("@opentelemetry/core"),
    import("@opentelemetry/exporter-trace-otlp-http"),
    import("@opentelemetry/resources"),
    import("@prisma/instrumentation"),
  ]);
  const provider = new TracerProvider({
    resource: resourceFromAttributes({ "service.name": options.serviceName, "service.version": options.serviceVersion }),
    spanProcessors: [new BatchSpanProcessor({ exporter: new OTLPTraceExporter({ url: `${options.endpoint.replace(/\/+$/, "")}/v1/traces` }), scheduledDelayMillis: 1_000 })],
  });
  // The SDK registers nothing by itself: the context follows async work through AsyncLocalStorage
  // (a request's spans nest under its server span) and an incoming `traceparent` continues its trace.
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  propagation.setGlobalPropagator(new W3CTraceContextPropagator());
  trace.setGlobalTracerProvider(provider);
  // Prisma's spans (each operation and the SQL it sends) through its global tracing hook.
  const prismaSpans = new PrismaInstrumentation();
  prismaSpans.enable();

  return {
    enabled: true,
    observeHttp(handler) {
      return (req: IncomingMessage, res: ServerResponse) => {
        const route = routeLabel(req.url);
        const method = req.method ?? "GET";
        const parent = propagation.extract(context.active(), req.headers);
        tracer().startActiveSpan(
          `${method} ${route}`,
          { kind: SpanKind.SERVER, attributes: { "http.request.method": method, "http.route": route } },
          parent,
          (span) => {
            res.once("close", () => {
              span.setAttribute("http.response.status_code", res.statusCode);
              if (res.statusCode >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
              span.end();
            });
            handler(req, res);
          },
        );
      };
    },
    observeCache(store) {
      const system = store.kind;
      const op = <T>(name: string, fn: () => Promise<T>) => inSpan(`${system} ${name}`, { "db.system.name": system, "db.operation.name": name }, fn, SpanKind.CLIENT);
      return {
        kind: store.kind,
        get: (key) => op("GET", () => store.get(key)),
        set: (key, value, ttl) => op("SET", () => store.set(key, value, ttl)),
        del: (...keys) => op("DEL", () => store.del(...keys)),
        ping: () => store.ping(),
        close: () => store.close(),
      };
    },
    observeDatabase(db) {
      // The statement's text has placeholders, never its values (token hashes, payloads).
      const query: Database["query"] = (text, values) =>
        inSpan(`postgresql ${text.trimStart().split(/\s/, 1)[0]!.toUpperCase()}`, { "db.system.name": "postgresql", "db.query.text": text }, () => db.query(text, values), SpanKind.CLIENT);
      return { ...db, query };
    },
    observeJobs(jobs) {
      return {
        ...jobs,
        handle(name, handler, expiry) {
          jobs.handle(name, (data, job) => inSpan(`job ${name}`, { "messaging.destination.name": name, "messaging.operation.type": "process" }, () => handler(data, job), SpanKind.CONSUMER), expiry);
        },
      };
    },
    observeMailer(mailer) {
      return wrapSend(mailer, (message) => inSpan("mail send", { "porta.mail.transport": mailer.kind }, () => mailer.send(message), SpanKind.CLIENT));
    },
    flush: () => provider.forceFlush(),
    async shutdown() {
      prismaSpans.disable();
      await provider.shutdown();
      trace.disable();
      context.disable();
      propagation.disable();
    },
  };
}
