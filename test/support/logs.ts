import { Writable } from "node:stream";
import type { Logger } from "pino";
import { onTestFinished } from "vitest";
import { createLogger } from "~/.server/logging/logger";

/**
 * Porta's log as tests see it, and the rule that an error nobody expected fails the test.
 *
 * Every capture made here is watched: a line at level `error` or above (pino's 50+) that no test
 * declared with `expectError` or `allowError` fails the test during which it was written
 * (test/support/setup.ts checks after each test), or, when it was written outside any test, the
 * file's teardown (`assertNoUnexpectedErrors` at a server's stop). So a stack trace from a code path
 * nobody meant to reach cannot pass silently.
 */
export type LogLine = Record<string, unknown>;
export type LogMatch = string | RegExp | ((line: LogLine) => boolean);

interface Expectation {
  match: LogMatch;
  /** `expectError`: at least one line must match before the expectation ends. */
  required: boolean;
  matched: number;
  /** Declared during a test: ends with it. Declared outside (a `beforeAll`): lasts as long as the capture. */
  perTest: boolean;
}

export interface LogCapture {
  lines: LogLine[];
  text(): string;
  stream: Writable;
  /** The error-level lines written so far that no expectation covered (they fail the next check). */
  unexpected(): LogLine[];
  /**
   * Declares that error-level lines matching `match` are expected, and at least one must come: within
   * the running test when called from a test, else until the capture is released.
   */
  expectError(match: LogMatch): void;
  /** Like `expectError`, but the line may also not come (a race the test does not control). */
  allowError(match: LogMatch): void;
  /** Stops watching this capture (its lines stay readable). */
  release(): void;
}

const ERROR_LEVEL = 50;
const watched = new Set<WatchedCapture>();

interface WatchedCapture extends LogCapture {
  check(scope: "test" | "all"): string[];
}

const describeLine = (line: LogLine) => {
  const err = line.err as { type?: string; message?: string } | undefined;
  const detail = err ? ` (${err.type ?? "Error"}: ${err.message ?? ""})` : "";
  return `${String(line.msg)}${detail}${line.requestId ? ` [request ${String(line.requestId)}]` : ""}`;
};

function matches(match: LogMatch, line: LogLine): boolean {
  if (typeof match === "function") return match(line);
  const text = `${String(line.msg)} ${JSON.stringify(line.err ?? "")}`;
  return typeof match === "string" ? text.includes(match) : match.test(text);
}

function insideTest(): boolean {
  try {
    onTestFinished(() => undefined);
    return true;
  } catch {
    return false;
  }
}

/** Collects the JSON log lines a logger writes; error-level ones are watched as above. */
export function captureLogs(): LogCapture {
  const lines: LogLine[] = [];
  let pending: LogLine[] = [];
  let expectations: Expectation[] = [];
  const cover = (line: LogLine) => {
    const covering = expectations.filter((e) => matches(e.match, line));
    for (const expectation of covering) expectation.matched++;
    return covering.length > 0;
  };
  const stream = new Writable({
    write(chunk: Buffer, _enc, done) {
      for (const text of chunk.toString("utf8").split("\n")) {
        if (!text.trim()) continue;
        const line = JSON.parse(text) as LogLine;
        lines.push(line);
        if (Number(line.level) >= ERROR_LEVEL && !cover(line)) pending.push(line);
      }
      done();
    },
  });
  const expect = (match: LogMatch, required: boolean) => {
    const perTest = insideTest();
    expectations.push({ match, required, matched: 0, perTest });
    // Lines written before the declaration (a server's start, an earlier step) are covered too.
    pending = pending.filter((line) => !cover(line));
  };
  const capture: WatchedCapture = {
    lines,
    stream,
    text: () => lines.map((l) => JSON.stringify(l)).join("\n"),
    unexpected: () => [...pending],
    expectError: (match) => expect(match, true),
    allowError: (match) => expect(match, false),
    release: () => void watched.delete(capture),
    check(scope) {
      const problems = pending.map((line) => `unexpected error log: ${describeLine(line)}`);
      pending = [];
      const ending = expectations.filter((e) => scope === "all" || e.perTest);
      for (const e of ending) if (e.required && e.matched === 0) problems.push(`an expected error log never came: ${String(e.match)}`);
      expectations = expectations.filter((e) => !ending.includes(e));
      return problems;
    },
  };
  watched.add(capture);
  return capture;
}

/** A logger into a watched capture, for unit tests that need one. */
export function testLogger(level = "warn"): { logger: Logger; logs: LogCapture } {
  const logs = captureLogs();
  return { logger: createLogger(level, logs.stream), logs };
}

/**
 * Stops watching every capture made so far. Test files share a worker process (vitest's
 * `isolate: false`), so each file starts by forgetting the captures of the files before it.
 */
export function forgetEarlierCaptures(): void {
  watched.clear();
}

/** Throws when any watched capture holds an error-level line nobody expected (setup.ts, after each test). */
export function assertNoUnexpectedErrors(scope: "test" | "all" = "test", only?: LogCapture): void {
  const problems = [...watched].filter((c) => !only || c === only).flatMap((c) => c.check(scope));
  if (problems.length > 0) {
    throw new Error(`${problems.join("\n")}\n(declare an error the test means to cause with logs.expectError(...) or logs.allowError(...))`);
  }
}
