import { z } from "zod";
import type { JobServiceContext } from "../context";
import { defineJob } from "../jobs/job";
import { applyCheck, checkAuditEntry, lookUpDomain, PENDING_AUTOMATIC_TRIES, recordCheck } from "./service";

/**
 * The re-check of organizations' domains (decision 086). A verified domain is looked up again
 * once its last check is a day old; LAPSE_AFTER_FAILURES failed checks in a row spanning two days
 * lapse it (audited domain.lapsed). A pending domain is tried every hour, PENDING_AUTOMATIC_TRIES
 * times, then left for an administrator's "verify now"; a lapsed one is left likewise. Each
 * look-up runs outside any transaction; its outcome is written in one of its own.
 */
const domainRecheckPayload = z.object({ domainId: z.string().optional() });

declare module "../jobs/job" {
  interface JobPayloadSchemas {
    "domain-recheck": typeof domainRecheckPayload;
  }
}

/** How often the process asks for a run; each run checks only the domains that are due. */
export const DOMAIN_RECHECK_TICK_MS = 60 * 60_000;
export const VERIFIED_RECHECK_MS = 24 * 60 * 60_000;
export const PENDING_RETRY_MS = 60 * 60_000;
/** A run checks at most this many domains; the rest are due at the next. */
const BATCH = 500;

type RecheckContext = JobServiceContext<"dnsResolver" | "logger">;

export async function recheckDueDomains(ctx: RecheckContext, data: { domainId?: string | undefined }, now: Date = new Date()): Promise<{ checked: number; verified: number; lapsed: number; failed: number }> {
  const verifiedDue = new Date(now.getTime() - VERIFIED_RECHECK_MS);
  const pendingDue = new Date(now.getTime() - PENDING_RETRY_MS);
  const rows = data.domainId
    ? await ctx.db.organizationDomain.findMany({ where: { id: data.domainId } })
    : await ctx.db.organizationDomain.findMany({
        where: {
          organization: { status: { not: "deleted" } },
          OR: [
            { status: "verified", OR: [{ lastCheckedAt: null }, { lastCheckedAt: { lte: verifiedDue } }] },
            { status: "pending", failures: { lt: PENDING_AUTOMATIC_TRIES }, OR: [{ lastCheckedAt: null }, { lastCheckedAt: { lte: pendingDue } }] },
          ],
        },
        orderBy: [{ lastCheckedAt: { sort: "asc", nulls: "first" } }, { id: "asc" }],
        take: BATCH,
      });
  const counts = { checked: 0, verified: 0, lapsed: 0, failed: 0 };
  for (const row of rows) {
    const check = await lookUpDomain(ctx.dnsResolver, row);
    const outcome = applyCheck(row, check, now);
    const written = await ctx.transaction(async (tx) => {
      const updated = await recordCheck(tx.db, row, outcome);
      // Removed or checked by an administrator meanwhile: that write stands.
      if (!updated) return false;
      const entry = checkAuditEntry(row, outcome, "schedule");
      if (entry) tx.audit(entry);
      return true;
    });
    if (!written) continue;
    counts.checked += 1;
    if (outcome.transition === "verified") counts.verified += 1;
    if (outcome.transition === "lapsed") counts.lapsed += 1;
    if (!check.ok) {
      counts.failed += 1;
      if (row.status === "verified") {
        ctx.logger.warn({ event: "domain_check_failed", domainId: row.id, organizationId: row.organizationId, domain: row.domain, failures: outcome.data.failures, lapsed: outcome.transition === "lapsed", reason: check.error }, "a verified domain's TXT record was not found");
      }
    }
  }
  return counts;
}

export const domainRecheckJob = defineJob<"domain-recheck", RecheckContext>({
  name: "domain-recheck",
  payload: domainRecheckPayload,
  handler: async (ctx, data) => void (await recheckDueDomains(ctx, data)),
  // Failures are per domain and recorded on it; the next tick tries again.
  retrySchedule: [],
  deadLetter: false,
});
