import { z } from "zod";

/**
 * The one email rule of the whole product: forms, the Admin API, invitations, imports, the
 * mailer and the bootstrap admin all accept exactly the same addresses.
 *
 * An address is one plain `local@domain`: a dot-atom local part (no quotes, comments, display
 * names, lists or line breaks) and dot-separated domain labels. A single label is allowed, so the
 * default bootstrap admin `admin@localhost` can sign in; Unicode labels are IDNs. This is stricter
 * than RFC 5322 on purpose (a quoted local part or an address literal is refused) and looser than
 * zod's `z.email()`, which demands a dot in the domain.
 */
export const EMAIL_MAX_LENGTH = 254;

const LOCAL_PART = /^[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+(?:\.[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+)*$/;
const DOMAIN_LABEL = /^[\p{L}\p{N}](?:[\p{L}\p{N}-]{0,61}[\p{L}\p{N}])?$/u;

/** True for exactly one bare address such as `ada@example.com` or `admin@localhost`. */
export function isEmailAddress(value: string): boolean {
  if (value.length > EMAIL_MAX_LENGTH) return false;
  const at = value.lastIndexOf("@");
  if (at <= 0 || at !== value.indexOf("@")) return false;
  const local = value.slice(0, at);
  const domain = value.slice(at + 1);
  return local.length <= 64 && LOCAL_PART.test(local) && domain.split(".").every((label) => DOMAIN_LABEL.test(label));
}

/** Trims, lower-cases (addresses are stored and compared that way) and checks an address. */
export function emailSchema(message = "must be an email address") {
  return z
    .string()
    .trim()
    .max(EMAIL_MAX_LENGTH, `must have at most ${EMAIL_MAX_LENGTH} characters`)
    .toLowerCase()
    .refine(isEmailAddress, { message });
}

export const EmailSchema = emailSchema();

/** The normal form Porta stores: trimmed and lower-case. */
export const normalizeEmail = (value: string) => value.trim().toLowerCase();
