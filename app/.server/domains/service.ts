import { randomBytes } from "node:crypto";
import type { OrganizationDomain as DomainRow } from "~/generated/prisma/client";
import { domainRecordOf, type DomainStatus, type OrganizationDomain } from "~/schemas/domain";
import { requireManagedOrganization } from "../admin/users/service";
import type { AuditEntry, Context, Db } from "../context";
import { conflict, notFound } from "../errors";
import { checkTxtRecord, type DnsResolver, type TxtCheck } from "./dns";

/**
 * An organization's email domains and their proof by a DNS TXT record (decision 086). A domain
 * is added pending with a random token; a check that finds `porta-domain-verification=<token>` at
 * `_porta-challenge.<domain>` verifies it. A verified domain is checked again daily (jobs.ts) and
 * lapses after LAPSE_AFTER_FAILURES failed checks spanning LAPSE_AFTER_MS; a pending one is
 * retried PENDING_AUTOMATIC_TRIES times, then waits for an administrator's "verify now".
 */

export const MAX_DOMAINS_PER_ORGANIZATION = 100;
export const LAPSE_AFTER_FAILURES = 3;
export const LAPSE_AFTER_MS = 2 * 24 * 60 * 60_000;
export const PENDING_AUTOMATIC_TRIES = 6;

export type { DomainRow };

const newToken = () => randomBytes(24).toString("base64url");

type ClaimingConnection = { id: string; name: string; domains: string[] };

/** Connections of the organization that claim each domain (home-realm discovery's `domains`). */
async function claimsOf(db: Db, organizationId: string): Promise<ClaimingConnection[]> {
  return db.identityProvider.findMany({ where: { organizationId }, select: { id: true, name: true, domains: true }, orderBy: [{ name: "asc" }, { id: "asc" }] });
}

export function toOrganizationDomain(row: DomainRow, claims: ClaimingConnection[]): OrganizationDomain {
  return {
    id: row.id,
    organizationId: row.organizationId,
    domain: row.domain,
    status: row.status as DomainStatus,
    record: domainRecordOf(row.domain, row.verificationToken),
    verifiedAt: row.verifiedAt?.toISOString() ?? null,
    lastCheckedAt: row.lastCheckedAt?.toISOString() ?? null,
    lastError: row.lastError,
    failures: row.failures,
    claimedBy: claims.filter((c) => c.domains.includes(row.domain)).map(({ id, name }) => ({ id, name })),
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
  };
}

export async function listOrganizationDomains(ctx: Context, organizationId: string): Promise<{ data: OrganizationDomain[] }> {
  await requireManagedOrganization(ctx, organizationId);
  const rows = await ctx.db.organizationDomain.findMany({ where: { organizationId }, orderBy: [{ domain: "asc" }] });
  const claims = await claimsOf(ctx.db, organizationId);
  return { data: rows.map((row) => toOrganizationDomain(row, claims)) };
}

/** The domain row, of a live organization; 404 otherwise (also for another organization's id where one is named). */
export async function requireOrganizationDomain(ctx: Context, id: string): Promise<{ row: DomainRow; body: OrganizationDomain }> {
  const row = await ctx.db.organizationDomain.findUnique({ where: { id } });
  if (!row) throw notFound("domain");
  await requireManagedOrganization(ctx, row.organizationId).catch(() => {
    throw notFound("domain");
  });
  return { row, body: toOrganizationDomain(row, await claimsOf(ctx.db, row.organizationId)) };
}

export async function addOrganizationDomain(ctx: Context, organizationId: string, domain: string): Promise<{ row: DomainRow; body: OrganizationDomain }> {
  await requireManagedOrganization(ctx, organizationId);
  const taken = await ctx.db.organizationDomain.findUnique({ where: { organizationId_domain: { organizationId, domain } }, select: { id: true } });
  if (taken) throw conflict("domain_exists", `The domain ${domain} is already listed for this organization.`, [{ field: "domain", message: "is already listed" }]);
  const count = await ctx.db.organizationDomain.count({ where: { organizationId } });
  if (count >= MAX_DOMAINS_PER_ORGANIZATION) {
    throw conflict("too_many_domains", `An organization lists at most ${MAX_DOMAINS_PER_ORGANIZATION} domains.`, [{ field: "domain", message: `the organization has ${MAX_DOMAINS_PER_ORGANIZATION} domains already` }]);
  }
  const row = await ctx.db.organizationDomain.create({ data: { organizationId, domain, verificationToken: newToken() } });
  return { row, body: toOrganizationDomain(row, await claimsOf(ctx.db, organizationId)) };
}

export async function deleteOrganizationDomain(ctx: Context, id: string): Promise<{ row: DomainRow; body: OrganizationDomain }> {
  const found = await requireOrganizationDomain(ctx, id);
  await ctx.db.organizationDomain.delete({ where: { id } });
  return found;
}

/** What one check changes: the row's new columns and the audit entry a change of status makes. */
export interface CheckOutcome {
  data: {
    status: DomainStatus;
    verifiedAt: Date | null;
    lastCheckedAt: Date;
    lastError: string | null;
    failures: number;
    failingSince: Date | null;
  };
  /** verified (pending or lapsed → verified), lapsed (verified → lapsed), or null (no change of status). */
  transition: "verified" | "lapsed" | null;
}

/**
 * The one rule for a check's result, pure: a match verifies (and clears the failures); a failure
 * of a verified domain counts, and lapses it once LAPSE_AFTER_FAILURES checks in a row failed
 * over at least LAPSE_AFTER_MS; a failure of a pending or lapsed one only records the error.
 */
export function applyCheck(row: Pick<DomainRow, "status" | "verifiedAt" | "failures" | "failingSince">, check: TxtCheck, now: Date): CheckOutcome {
  if (check.ok) {
    const wasVerified = row.status === "verified";
    return {
      data: { status: "verified", verifiedAt: wasVerified ? (row.verifiedAt ?? now) : now, lastCheckedAt: now, lastError: null, failures: 0, failingSince: null },
      transition: wasVerified ? null : "verified",
    };
  }
  const failures = row.failures + 1;
  const failingSince = row.failingSince ?? now;
  const lapses = row.status === "verified" && failures >= LAPSE_AFTER_FAILURES && now.getTime() - failingSince.getTime() >= LAPSE_AFTER_MS;
  return {
    data: {
      status: lapses ? "lapsed" : (row.status as DomainStatus),
      verifiedAt: lapses ? null : row.verifiedAt,
      lastCheckedAt: now,
      lastError: check.error,
      failures,
      failingSince,
    },
    transition: lapses ? "lapsed" : null,
  };
}

/**
 * The audit entry of a check: every change of status; an administrator's check also when it
 * changes none (domain.verified with `reconfirmed`, or domain.check_failed with the error). The
 * schedule's checks that change nothing are not audited (the row keeps the last error).
 */
export function checkAuditEntry(row: Pick<DomainRow, "id" | "organizationId" | "domain">, outcome: CheckOutcome, trigger: "api" | "schedule"): AuditEntry | null {
  const base = { organizationId: row.organizationId, targetType: "organization_domain", targetId: row.id } as const;
  if (outcome.transition === "verified") return { ...base, eventType: "domain.verified", data: { domain: row.domain, trigger } };
  if (outcome.transition === "lapsed") return { ...base, eventType: "domain.lapsed", data: { domain: row.domain, trigger, failures: outcome.data.failures, lastError: outcome.data.lastError } };
  if (trigger === "schedule") return null;
  if (outcome.data.lastError === null) return { ...base, eventType: "domain.verified", data: { domain: row.domain, trigger, reconfirmed: true } };
  return { ...base, eventType: "domain.check_failed", data: { domain: row.domain, trigger, error: outcome.data.lastError, failures: outcome.data.failures } };
}

/** Looks the domain's TXT record up (outside any transaction where the caller can) and says what it found. */
export function lookUpDomain(resolver: DnsResolver, row: Pick<DomainRow, "domain" | "verificationToken">): Promise<TxtCheck> {
  const record = domainRecordOf(row.domain, row.verificationToken);
  return checkTxtRecord(resolver, record.name, row.verificationToken);
}

/**
 * Writes a check's outcome over the row as it was read: a check that raced a removal or another
 * check changes nothing (0 rows) and reports it.
 */
export async function recordCheck(db: Db, row: DomainRow, outcome: CheckOutcome): Promise<DomainRow | null> {
  const written = await db.organizationDomain.updateMany({ where: { id: row.id, updatedAt: row.updatedAt }, data: outcome.data });
  if (written.count === 0) return null;
  return db.organizationDomain.findUnique({ where: { id: row.id } });
}

/** The Admin API's "verify now": look up, record, audit. The look-up is bounded (5 s) by the resolver. */
/** Runs the write that follows a lookup in a transaction of its own (the Admin API's `transaction`). */
export interface CheckWriter {
  transaction<T>(work: (ctx: Context) => Promise<T>): Promise<T>;
}

/**
 * Looks the record up now and records the outcome. The lookup runs outside any transaction (a slow
 * or unanswering DNS server must not hold a database connection); the write is a compare-and-set
 * on the row's version, so a change made meanwhile is a 409, not a lost update.
 */
export async function verifyOrganizationDomainNow(ctx: Context<"dnsResolver">, writer: CheckWriter, id: string, now = new Date()): Promise<{ row: DomainRow; body: OrganizationDomain }> {
  const { row } = await requireOrganizationDomain(ctx, id);
  const check = await lookUpDomain(ctx.dnsResolver, row);
  const outcome = applyCheck(row, check, now);
  return writer.transaction(async (tx) => {
    const updated = await recordCheck(tx.db, row, outcome);
    if (!updated) throw conflict("domain_changed", "The domain changed while it was checked. Read it again and retry.");
    const entry = checkAuditEntry(row, outcome, "api");
    if (entry) tx.audit(entry);
    return { row: updated, body: toOrganizationDomain(updated, await claimsOf(tx.db, row.organizationId)) };
  });
}
