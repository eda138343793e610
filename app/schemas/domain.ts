import { z } from "zod";

/**
 * An organization's verified email domains (decision 086): the name an administrator types,
 * normalized to the one form the database keeps (lower case, IDNA ASCII), and the shapes the
 * Admin API, its SDK and the console share.
 */

export const DOMAIN_STATUSES = ["pending", "verified", "lapsed"] as const;
export type DomainStatus = (typeof DOMAIN_STATUSES)[number];

/** The TXT record's name is this label before the domain; its value is the prefix and the token. */
export const DOMAIN_CHALLENGE_LABEL = "_porta-challenge";
export const DOMAIN_TXT_PREFIX = "porta-domain-verification=";

const MAX_INPUT_LENGTH = 300;
const MAX_DOMAIN_LENGTH = 253;
const LABEL = /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/;
/** Anything a host name written alone never holds: a scheme, a path, a port, user info, brackets, spaces, control characters. */
const FORBIDDEN = /[\s/\\?#@:[\]%*!$&'()+,;=<>"`{}|^~]/u;
/** Control characters (NUL among them), which the URL parser would drop or refuse in ways of its own. */
const hasControl = (text: string) => [...text].some((c) => c.charCodeAt(0) < 0x20 || c.charCodeAt(0) === 0x7f);
const IPV4 = /^\d{1,3}(?:\.\d{1,3}){3}$/;

/**
 * RFC 3492's decoding of an ACE label's part after "xn--", or null when it is not valid punycode
 * (the URL parser of some runtimes lets such labels through).
 */
export function decodePunycode(input: string): string | null {
  const base = 36, tMin = 1, tMax = 26, skew = 38, damp = 700;
  const delimiter = input.lastIndexOf("-");
  const output: number[] = [];
  for (let i = 0; i < Math.max(delimiter, 0); i++) {
    const code = input.charCodeAt(i);
    if (code >= 0x80) return null;
    output.push(code);
  }
  const digit = (c: number) => (c >= 48 && c <= 57 ? c - 22 : c >= 97 && c <= 122 ? c - 97 : c >= 65 && c <= 90 ? c - 65 : base);
  const adapt = (delta: number, points: number, first: boolean) => {
    delta = first ? Math.floor(delta / damp) : delta >> 1;
    delta += Math.floor(delta / points);
    let k = 0;
    for (; delta > ((base - tMin) * tMax) >> 1; k += base) delta = Math.floor(delta / (base - tMin));
    return k + Math.floor(((base - tMin + 1) * delta) / (delta + skew));
  };
  let n = 128, i = 0, bias = 72;
  for (let at = delimiter > 0 ? delimiter + 1 : 0; at < input.length; ) {
    const oldI = i;
    for (let w = 1, k = base; ; k += base) {
      if (at >= input.length) return null;
      const d = digit(input.charCodeAt(at++));
      if (d >= base || d > Math.floor((0x7fffffff - i) / w)) return null;
      i += d * w;
      const t = k <= bias ? tMin : k >= bias + tMax ? tMax : k - bias;
      if (d < t) break;
      if (w > Math.floor(0x7fffffff / (base - t))) return null;
      w *= base - t;
    }
    const length = output.length + 1;
    bias = adapt(i - oldI, length, oldI === 0);
    if (Math.floor(i / length) > 0x10ffff - n) return null;
    n += Math.floor(i / length);
    i %= length;
    output.splice(i++, 0, n);
  }
  if (output.length === 0 || output.every((c) => c < 0x80)) return null;
  return String.fromCodePoint(...output);
}

/** An ACE label is kept only when it decodes and its Unicode form converts back to it (IDNA's own check). */
function roundTrips(label: string): boolean {
  const unicode = decodePunycode(label.slice(4));
  if (unicode === null) return false;
  try {
    return new URL(`http://${unicode}.example/`).hostname === `${label}.example`;
  } catch {
    return false;
  }
}

export type DomainNormalization = { ok: true; domain: string } | { ok: false; message: string };

/**
 * The domain as stored: trimmed, lower case, converted to its IDNA ASCII (punycode) form by the
 * WHATWG URL host parser (the same in Node and browsers), then checked as a registrable host
 * name: two labels or more, each of letters, digits and inner hyphens, at most 63 characters,
 * 253 in all, a top-level label that is not all digits. Refused: IP addresses, wildcards, a
 * trailing dot, empty labels, and punycode that does not decode.
 */
export function normalizeDomain(input: string): DomainNormalization {
  const refuse = (message: string): DomainNormalization => ({ ok: false, message });
  if (input.length > MAX_INPUT_LENGTH) return refuse(`must have at most ${MAX_DOMAIN_LENGTH} characters`);
  const typed = input.trim();
  if (typed === "") return refuse("must not be empty");
  if (typed.includes("*")) return refuse("must be one domain, without a wildcard");
  if (hasControl(typed) || FORBIDDEN.test(typed)) return refuse("must be a domain name such as example.com, without scheme, path, port or spaces");
  if (/[.\u3002\uff0e\uff61]$/u.test(typed)) return refuse("must not end with a dot");
  let host: string;
  try {
    host = new URL(`http://${typed}/`).hostname;
  } catch {
    return refuse("must be a domain name such as example.com");
  }
  if (host.startsWith("[") || IPV4.test(host)) return refuse("must be a domain name, not an IP address");
  if (host.length > MAX_DOMAIN_LENGTH) return refuse(`must have at most ${MAX_DOMAIN_LENGTH} characters`);
  const labels = host.split(".");
  if (labels.length < 2) return refuse("must have at least two labels, such as example.com");
  if (labels.some((label) => label === "")) return refuse("must not have empty labels");
  if (!labels.every((label) => LABEL.test(label))) return refuse("must have labels of letters, digits and inner hyphens, at most 63 characters each");
  if (labels.some((label) => label.startsWith("xn--") && !roundTrips(label))) return refuse("must not have labels that are not valid punycode");
  if (/^\d+$/.test(labels[labels.length - 1]!)) return refuse("must end with a top-level domain, not a number");
  return { ok: true, domain: host };
}

/** The domain part of an email address in the stored form, or null when it has none that is valid. */
export function emailDomainOf(email: string | null | undefined): string | null {
  if (!email) return null;
  const at = email.lastIndexOf("@");
  if (at < 0) return null;
  const normalized = normalizeDomain(email.slice(at + 1));
  return normalized.ok ? normalized.domain : null;
}

/** The domain as an administrator types it, parsed to its stored form (422 with the reason otherwise). */
export const DomainNameSchema = z.string().transform((value, ctx) => {
  const normalized = normalizeDomain(value);
  if (!normalized.ok) {
    ctx.addIssue({ code: "custom", message: normalized.message });
    return z.NEVER;
  }
  return normalized.domain;
});

/** Where the TXT record goes and what it says. */
export const DomainRecordSchema = z.object({
  type: z.literal("TXT"),
  name: z.string(),
  value: z.string(),
});
export type DomainRecord = z.infer<typeof DomainRecordSchema>;

export function domainRecordOf(domain: string, token: string): DomainRecord {
  return { type: "TXT", name: `${DOMAIN_CHALLENGE_LABEL}.${domain}`, value: `${DOMAIN_TXT_PREFIX}${token}` };
}

export const OrganizationDomainSchema = z.object({
  id: z.string(),
  organizationId: z.string(),
  domain: z.string(),
  status: z.enum(DOMAIN_STATUSES),
  /** The TXT record to create (and keep: the daily re-check looks for it). */
  record: DomainRecordSchema,
  verifiedAt: z.string().nullable(),
  lastCheckedAt: z.string().nullable(),
  lastError: z.string().nullable(),
  /** Failed checks in a row. */
  failures: z.number().int(),
  /** Connections of the organization that claim the domain for home-realm discovery. */
  claimedBy: z.array(z.object({ id: z.string(), name: z.string() })),
  createdAt: z.string(),
  updatedAt: z.string(),
});
export type OrganizationDomain = z.infer<typeof OrganizationDomainSchema>;

export const OrganizationDomainCreateSchema = z.object({ domain: DomainNameSchema }).strict();
export type OrganizationDomainCreate = z.infer<typeof OrganizationDomainCreateSchema>;

/** What a console's domains page says after a form: field errors (with what was typed), or the outcome of Verify now. */
export type DomainsPageOutcome = { kind: "invalid"; errors: Record<string, string>; domain?: string } | { kind: "checked"; id: string; status: string; lastError: string | null };

