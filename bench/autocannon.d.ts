/** The part of autocannon 8's programmatic API the benchmark uses (the package ships no types). */
declare module "autocannon" {
  import { type EventEmitter } from "node:events";

  namespace autocannon {
    interface RequestSpec {
      method?: string;
      path?: string;
      headers?: Record<string, string>;
      body?: string | Buffer;
      /** Returns the request to send; called once per request sent. */
      setupRequest?: (request: RequestSpec, context: Record<string, unknown>) => RequestSpec;
      onResponse?: (status: number, body: string, context: Record<string, unknown>, headers: Record<string, string>) => void;
    }

    interface Options {
      url: string;
      connections?: number;
      /** Seconds. */
      duration?: number;
      /** A fixed number of requests (overrides duration). */
      amount?: number;
      overallRate?: number;
      connectionRate?: number;
      pipelining?: number;
      /** Seconds. */
      timeout?: number;
      method?: string;
      headers?: Record<string, string>;
      body?: string | Buffer;
      requests?: RequestSpec[];
      title?: string;
      bailout?: number;
      /** A response whose body this rejects counts as a mismatch. */
      verifyBody?: (body: string) => boolean;
    }

    interface Histogram {
      average: number;
      mean: number;
      stddev: number;
      min: number;
      max: number;
      total: number;
      p2_5: number;
      p50: number;
      p75: number;
      p90: number;
      p97_5: number;
      p99: number;
      p99_9: number;
    }

    interface Result {
      title?: string;
      url: string;
      requests: Histogram;
      latency: Histogram;
      throughput: Histogram;
      /** Seconds. */
      duration: number;
      errors: number;
      timeouts: number;
      mismatches: number;
      non2xx: number;
      resets: number;
      "1xx": number;
      "2xx": number;
      "3xx": number;
      "4xx": number;
      "5xx": number;
      statusCodeStats: Record<string, { count: number }>;
      start: Date;
      finish: Date;
    }

    interface Instance extends EventEmitter, PromiseLike<Result> {
      stop(): void;
    }
  }

  function autocannon(options: autocannon.Options): autocannon.Instance;
  export = autocannon;
}
