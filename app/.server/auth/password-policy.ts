import { createRequire } from "node:module";
import type * as CommonWords from "@zxcvbn-ts/language-common";

/**
 * NIST SP 800-63B rules for every place a password is set: at least the configured minimum
 * (8 by default) and at most 1,024 characters after NFKC normalization (64 or more must be
 * allowed), no composition rules, and no password from the offline list of 49,233 common,
 * breached passwords shipped by @zxcvbn-ts/language-common.
 */
export const MAX_PASSWORD_LENGTH = 1024;

export type PasswordProblem = "too_short" | "too_long" | "breached" | "contains_email" | "contains_organization";

export interface PasswordCheck {
  ok: boolean;
  problem?: PasswordProblem;
  /** For too_short / too_long: the limit that was not met. */
  limit?: number;
}

let breached: Set<string> | undefined;
function breachedPasswords(): Set<string> {
  // Required when a password is first set, not imported at start: the package's word lists cost
  // ~12 MB that a server nobody sets a password on never needs (decision 056).
  if (!breached) {
    const { dictionary } = createRequire(import.meta.url)("@zxcvbn-ts/language-common") as typeof CommonWords;
    breached = new Set(dictionary["passwords-common"].map((p) => p.toLowerCase()));
  }
  return breached;
}

export function normalizePassword(password: string): string {
  return password.normalize("NFKC");
}

/** Context words shorter than this are left alone: they would refuse ordinary passwords. */
const CONTEXT_WORD_MIN = 4;
/** Letters and digits only, lower case: "Acme Corp." and "acme-corp" are the same word. */
const compact = (text: string) => text.normalize("NFKC").toLowerCase().replace(/[^\p{L}\p{N}]+/gu, "");

/**
 * NIST SP 800-63B §5.1.1.2 context-specific words: the account's address (its local part) and the
 * organization's name, each when long enough to mean something, anywhere in the password.
 */
export function checkNewPassword(password: string, options: { minLength: number; email?: string; organizationName?: string }): PasswordCheck {
  const normalized = normalizePassword(password);
  // Count code points, not UTF-16 units, as NIST asks.
  const length = [...normalized].length;
  if (length < options.minLength) return { ok: false, problem: "too_short", limit: options.minLength };
  if (length > MAX_PASSWORD_LENGTH) return { ok: false, problem: "too_long", limit: MAX_PASSWORD_LENGTH };
  const lower = normalized.toLowerCase();
  if (breachedPasswords().has(lower)) return { ok: false, problem: "breached" };
  const letters = compact(normalized);
  const localPart = compact(options.email?.split("@")[0] ?? "");
  if (options.email && (lower.includes(options.email.toLowerCase()) || (localPart.length >= CONTEXT_WORD_MIN && letters.includes(localPart)))) {
    return { ok: false, problem: "contains_email" };
  }
  const organization = compact(options.organizationName ?? "");
  if (organization.length >= CONTEXT_WORD_MIN && letters.includes(organization)) return { ok: false, problem: "contains_organization" };
  return { ok: true };
}
