import { Resolver } from "node:dns/promises";
import { DOMAIN_TXT_PREFIX } from "~/schemas/domain";

/**
 * DNS TXT look-ups for domain verification (decision 086), injected as the `dnsResolver`
 * collaborator so that tests hand a fake one. The default asks the system's resolvers with a
 * per-try timeout and a bound on the whole look-up.
 */
export interface DnsResolver {
  /** The TXT records at `name`, each as the strings it is split into; throws like node:dns (err.code ENOTFOUND, ENODATA, ETIMEOUT…). */
  resolveTxt(name: string): Promise<string[][]>;
}

const LOOKUP_TIMEOUT_MS = 5_000;

export function createDnsResolver(options: { timeoutMs?: number } = {}): DnsResolver {
  const timeoutMs = options.timeoutMs ?? LOOKUP_TIMEOUT_MS;
  const resolver = new Resolver({ timeout: Math.ceil(timeoutMs / 2), tries: 2 });
  return {
    resolveTxt: (name) =>
      new Promise<string[][]>((resolve, reject) => {
        const timer = setTimeout(() => {
          resolver.cancel();
          reject(Object.assign(new Error(`DNS look-up of ${name} timed out`), { code: "ETIMEOUT" }));
        }, timeoutMs);
        resolver.resolveTxt(name).then(
          (records) => {
            clearTimeout(timer);
            resolve(records);
          },
          (error: unknown) => {
            clearTimeout(timer);
            reject(error instanceof Error ? error : new Error(String(error)));
          },
        );
      }),
  };
}

export type TxtCheck = { ok: true } | { ok: false; error: string };

/**
 * Whether one of the TXT records (each joined from its strings: a long value is split into
 * strings of 255 bytes) is exactly `porta-domain-verification=<token>`, after trimming spaces
 * around it. Another value is no match, even one that starts with the prefix.
 */
export function txtMatches(records: readonly (readonly string[])[], token: string): boolean {
  const expected = `${DOMAIN_TXT_PREFIX}${token}`;
  return records.some((parts) => parts.join("").trim() === expected);
}

const NOT_FOUND = new Set(["ENOTFOUND", "ENODATA", "NXDOMAIN", "ENONAME"]);

/** Looks the record up and says why it does not prove the domain; never throws. */
export async function checkTxtRecord(resolver: DnsResolver, name: string, token: string): Promise<TxtCheck> {
  let records: string[][];
  try {
    records = await resolver.resolveTxt(name);
  } catch (error) {
    const code = typeof (error as { code?: unknown })?.code === "string" ? (error as { code: string }).code : "";
    if (NOT_FOUND.has(code)) return { ok: false, error: `no TXT record at ${name}` };
    if (code === "ETIMEOUT" || code === "ECANCELLED") return { ok: false, error: `DNS look-up of ${name} timed out` };
    return { ok: false, error: `DNS look-up of ${name} failed${code ? ` (${code})` : ""}` };
  }
  if (records.length === 0) return { ok: false, error: `no TXT record at ${name}` };
  if (txtMatches(records, token)) return { ok: true };
  const ours = records.some((parts) => parts.join("").trim().startsWith(DOMAIN_TXT_PREFIX));
  return { ok: false, error: ours ? `the TXT record at ${name} has another token` : `no TXT record at ${name} starts with ${DOMAIN_TXT_PREFIX}` };
}
