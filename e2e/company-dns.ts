import type { IncomingMessage, ServerResponse } from "node:http";
import { createDnsResolver, type DnsResolver } from "~/.server/domains/dns";
import { SAML_DOMAIN } from "./saml-idp";

/**
 * The DNS of the company behind e2e/saml-idp.ts, for e2e/setup-link.spec.ts: its zone is what its
 * IT person typed into the company's DNS console (`POST /dns` on the IdP's server, a name and a
 * TXT value), as they copy the record a setup page shows. Names of the company's domain are
 * answered from the zone (NXDOMAIN when absent); every other name goes to the system's resolvers
 * as in production. Kept in memory: a look-up happens inside Verify's transaction, and the
 * embedded database has one connection.
 */
export interface CompanyDns {
  resolver: DnsResolver;
  /** Answers the DNS console's requests; false for any other. */
  handle(req: IncomingMessage, res: ServerResponse): Promise<boolean>;
}

export const COMPANY_DNS_PATH = "/dns";

export function companyDns(): CompanyDns {
  const zone = new Map<string, string[][]>();
  const real = createDnsResolver();
  const ours = (name: string) => name.toLowerCase() === SAML_DOMAIN || name.toLowerCase().endsWith(`.${SAML_DOMAIN}`);
  return {
    resolver: {
      async resolveTxt(name) {
        if (!ours(name)) return real.resolveTxt(name);
        const records = zone.get(name.toLowerCase());
        if (!records) throw Object.assign(new Error(`ENOTFOUND ${name}`), { code: "ENOTFOUND" });
        return records.map((parts) => [...parts]);
      },
    },
    async handle(req, res) {
      if (req.method !== "POST" || req.url !== COMPANY_DNS_PATH) return false;
      const chunks: Buffer[] = [];
      for await (const chunk of req) chunks.push(chunk as Buffer);
      const { name, value } = JSON.parse(Buffer.concat(chunks).toString("utf8")) as { name: string; value: string };
      if (!ours(name)) {
        res.writeHead(403).end();
        return true;
      }
      zone.set(name.toLowerCase(), [...(zone.get(name.toLowerCase()) ?? []), [value]]);
      res.writeHead(204).end();
      return true;
    },
  };
}
