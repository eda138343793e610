import { randomBytes } from "node:crypto";
import type { DnsResolver } from "~/.server/domains/dns";
import type { TestPorta } from "./porta";

/**
 * Verified domains in tests (decision 086): rows written straight to the database for tests of
 * something else that need a domain the organization proved, and a fake DNS whose TXT records a
 * test sets and takes away.
 */
export async function recordVerifiedDomains(porta: TestPorta, organizationId: string, domains: readonly string[]): Promise<void> {
  for (const domain of domains) {
    await porta.services.db.prisma.organizationDomain.upsert({
      where: { organizationId_domain: { organizationId, domain } },
      create: { organizationId, domain, verificationToken: randomBytes(24).toString("base64url"), status: "verified", verifiedAt: new Date(), lastCheckedAt: new Date() },
      update: { status: "verified", verifiedAt: new Date(), failures: 0, failingSince: null, lastError: null },
    });
  }
}

export interface FakeDns extends DnsResolver {
  /** Sets the TXT records at a name (each record as its strings); an empty list answers ENODATA. */
  set(name: string, records: string[][]): void;
  /** Takes every record at a name away: NXDOMAIN. */
  remove(name: string): void;
  /** The next look-ups of a name time out. */
  timeOut(name: string): void;
  lookups: string[];
}

export function fakeDns(): FakeDns {
  const zone = new Map<string, string[][] | "timeout">();
  const lookups: string[] = [];
  const fail = (code: string, name: string) => Object.assign(new Error(`${code} ${name}`), { code });
  return {
    lookups,
    set: (name, records) => void zone.set(name.toLowerCase(), records),
    remove: (name) => void zone.delete(name.toLowerCase()),
    timeOut: (name) => void zone.set(name.toLowerCase(), "timeout"),
    async resolveTxt(name) {
      lookups.push(name);
      const found = zone.get(name.toLowerCase());
      if (found === undefined) throw fail("ENOTFOUND", name);
      if (found === "timeout") throw fail("ETIMEOUT", name);
      if (found.length === 0) throw fail("ENODATA", name);
      return found.map((parts) => [...parts]);
    },
  };
}
