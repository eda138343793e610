import type { Prisma } from "~/generated/prisma/client";
import type { FullContext } from "../../context";
import type { Services } from "../../services";

/**
 * The `Services` bag as a handler that has not moved to its context yet must see it inside a
 * write: every database call goes through the write's transaction (on the embedded PGlite the
 * transaction holds the only connection, so anything else would wait for it forever), a nested
 * `$transaction` joins the write's, audit entries and jobs are the context's, and settings read
 * through the same connection. Cache and provider invalidations such a handler makes still run
 * before the commit; areas on the context defer them with `ctx.afterCommit`.
 *
 * Transitional: it goes once every operations module uses `ctx` (docs/architecture.md).
 */
export function servicesBoundTo(services: Services, ctx: FullContext): Services {
  const tx = ctx.db;
  const joinWrite = (work: unknown) =>
    typeof work === "function"
      ? (work as (client: Prisma.TransactionClient) => Promise<unknown>)(tx)
      : (async () => {
          const results: unknown[] = [];
          // A batch is a list of lazy Prisma promises: awaited in order, they run in the write.
          for (const step of work as Array<PromiseLike<unknown>>) results.push(await step);
          return results;
        })();
  const prisma = new Proxy(tx, {
    get: (target, property, receiver) => (property === "$transaction" ? joinWrite : Reflect.get(target, property, receiver)),
  }) as unknown as Services["db"]["prisma"];
  return {
    ...services,
    db: { ...services.db, prisma },
    settings: ctx.settings,
    audit: {
      record: async (entry) => ctx.audit(entry),
      recordMany: async (entries) => entries.forEach((entry) => ctx.audit(entry)),
    },
    jobs: { ...services.jobs, enqueue: (name, data) => ctx.enqueue(name, data) },
  };
}
