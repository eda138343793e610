/**
 * The change an update made, field by field: only the fields whose value differs, each with its
 * value before and after. The audit writer computes it from the two states a write hands over
 * (decision 039), so every update records it the same way.
 */
export interface FieldChange {
  field: string;
  before: unknown;
  after: unknown;
}

/**
 * Fields whose values never enter the audit log, whatever a caller hands over: secrets, hashes,
 * keys and codes. A changed one is recorded by name only, its values replaced by `REDACTED`.
 */
const SECRET_FIELD = /password|secret|hash|tokens?$|recoveryCodes?$|private|encrypted|credential|(^|_)key$/i;
export const REDACTED = "[redacted]";

/** Bookkeeping that changes with every write and says nothing about the change itself. */
const BOOKKEEPING = new Set(["version", "updatedAt"]);

const same = (a: unknown, b: unknown) => JSON.stringify(a ?? null) === JSON.stringify(b ?? null);

/** `hasPassword` and the like say whether a secret exists, which is no secret. */
export function isSecretField(field: string): boolean {
  return !/^has[A-Z]/.test(field) && SECRET_FIELD.test(field);
}

/** A yes/no (`passwordSet: true`) or nothing says whether there is a secret, never what it is. */
const harmless = (value: unknown) => value === null || value === undefined || typeof value === "boolean";

export function isSecretValue(field: string, value: unknown): boolean {
  return isSecretField(field) && !harmless(value);
}

export function fieldChanges(before: Record<string, unknown>, after: Record<string, unknown>): FieldChange[] {
  const fields = [...new Set([...Object.keys(before), ...Object.keys(after)])].filter((f) => !BOOKKEEPING.has(f));
  return fields
    .filter((field) => !same(before[field], after[field]))
    .map((field) =>
      isSecretValue(field, before[field]) || isSecretValue(field, after[field])
        ? { field, before: REDACTED, after: REDACTED }
        : { field, before: before[field] ?? null, after: after[field] ?? null },
    );
}
