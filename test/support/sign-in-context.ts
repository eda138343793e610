import type { Actor, AuditEntry, FullContext } from "~/.server/context";
import type { LimitName, LimitOutcome, RateLimits } from "~/.server/rate-limit/limiters";
import type { MethodContext, Proof, Prove } from "~/.server/sign-in/method";

/**
 * A sign-in context without a server, for the unit tests of app/.server/sign-in/methods: the
 * collaborators a test names, a database made of the few delegate functions the method calls,
 * and a `transaction`/`prove` that run the work at once and keep what it wrote (audit entries,
 * the actor, the proof). Anything the test did not provide throws when touched.
 */
export interface Recorded {
  transactions: Array<{ actor: Actor; audits: AuditEntry[]; proof: Proof | null }>;
  audits(): AuditEntry[];
  consumed: Array<[LimitName, string]>;
  refunded: Array<[LimitName, string]>;
}

const strict = <T extends object>(name: string, given: Partial<T>): T =>
  new Proxy(given, {
    get(target, key) {
      if (key in target || typeof key === "symbol" || key === "then") return (target as Record<string | symbol, unknown>)[key];
      throw new Error(`the fake ${name} has no ${String(key)}`);
    },
  }) as T;

export function fakeLimits(recorded: Recorded, refuse: Partial<Record<LimitName, number>> = {}): RateLimits {
  const outcome = (name: LimitName): LimitOutcome => (refuse[name] !== undefined ? { allowed: false, retryAfterSeconds: refuse[name]! } : { allowed: true });
  return strict<RateLimits>("limits", {
    consume: async (name, key) => {
      recorded.consumed.push([name, key]);
      return outcome(name);
    },
    check: async (name) => outcome(name),
    refundAll: async (checks) => void recorded.refunded.push(...checks),
  });
}

export function fakeSignInContext(
  parts: { db?: Record<string, unknown>; redirectTo?: string } & Record<string, unknown> = {},
): { ctx: MethodContext<never> & Record<string, unknown>; recorded: Recorded } {
  const recorded: Recorded = { transactions: [], audits: () => recorded.transactions.flatMap((t) => t.audits), consumed: [], refunded: [] };
  const { db = {}, redirectTo = "https://app.test/resume", ...collaborators } = parts;
  const database = strict<FullContext["db"]>("database", db as Partial<FullContext["db"]>);
  const run = async <T>(actor: Actor, work: (tx: FullContext) => Promise<T>, keep: (value: T) => Proof | null) => {
    const audits: AuditEntry[] = [];
    const tx = strict<FullContext>("transaction", { ...collaborators, db: database, actor, audit: (entry) => void audits.push(entry) } as Partial<FullContext>);
    const value = await work(tx);
    recorded.transactions.push({ actor, audits, proof: keep(value) });
    return value;
  };
  const prove: Prove = async (actor, work) => {
    const { value, proof } = await run(actor, work, (result) => result.proof);
    return { value, redirectTo: proof ? redirectTo : null };
  };
  const ctx = strict<MethodContext<never> & Record<string, unknown>>("context", {
    ...collaborators,
    db: database,
    actor: { type: "anonymous", id: null, ip: null, requestId: null },
    transaction: (actor, work) => run(actor, work, () => null),
    prove,
  } as Partial<MethodContext<never> & Record<string, unknown>>);
  return { ctx, recorded };
}
