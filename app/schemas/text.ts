/**
 * The one rule for text Porta accepts anywhere (URLs, query values, form fields, JSON bodies):
 * no NUL and no unpaired UTF-16 surrogate. PostgreSQL cannot store either in a text column
 * (22021), and neither survives UTF-8 encoding, so such input is refused at the edge instead of
 * failing half-way through a write.
 */
// eslint-disable-next-line no-control-regex -- finding NUL is the point
const UNREPRESENTABLE = /\u0000|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

export const UNREPRESENTABLE_MESSAGE = "contains a character that cannot be stored (NUL or an unpaired surrogate)";

export function isRepresentableText(value: string): boolean {
  return !UNREPRESENTABLE.test(value);
}

/** One value on the way through a JSON document: where it sits, for naming it in an error. */
interface Visit {
  value: unknown;
  /** Its key or index in its parent; undefined for the document itself. */
  key: string | undefined;
  parent: Visit | undefined;
}

function pathOf(visit: Visit): string {
  const keys: string[] = [];
  for (let at: Visit | undefined = visit; at?.key !== undefined; at = at.parent) keys.push(at.key);
  return keys.reverse().join(".");
}

/**
 * The path (`a.b.0.c`) of the first unrepresentable string in a parsed JSON value, keys
 * included, or undefined when every string is fine. `""` is the value itself. One pass in
 * document order without recursion, so a hostile nesting depth costs neither the stack nor more
 * than a visit per value (callers refuse such depth first: ./json-depth).
 */
export function findUnrepresentable(value: unknown): string | undefined {
  const pending: Visit[] = [{ value, key: undefined, parent: undefined }];
  while (pending.length > 0) {
    const visit = pending.pop()!;
    const current = visit.value;
    // A key is checked before its value, as it comes first in the document.
    if (visit.key !== undefined && visit.parent && !Array.isArray(visit.parent.value) && !isRepresentableText(visit.key)) return pathOf(visit);
    if (typeof current === "string") {
      if (!isRepresentableText(current)) return pathOf(visit);
    } else if (Array.isArray(current)) {
      for (let i = current.length - 1; i >= 0; i--) pending.push({ value: current[i], key: String(i), parent: visit });
    } else if (current && typeof current === "object") {
      const entries = Object.entries(current);
      for (let i = entries.length - 1; i >= 0; i--) pending.push({ value: entries[i]![1], key: entries[i]![0], parent: visit });
    }
  }
  return undefined;
}
