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

/**
 * The path (`a.b.0.c`) of the first unrepresentable string in a parsed JSON value, keys
 * included, or undefined when every string is fine. `""` is the value itself.
 */
export function findUnrepresentable(value: unknown, path: string[] = []): string | undefined {
  if (typeof value === "string") return isRepresentableText(value) ? undefined : path.join(".");
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const found = findUnrepresentable(value[i], [...path, String(i)]);
      if (found !== undefined) return found;
    }
    return undefined;
  }
  if (value && typeof value === "object") {
    for (const [key, child] of Object.entries(value)) {
      if (!isRepresentableText(key)) return [...path, key].join(".");
      const found = findUnrepresentable(child, [...path, key]);
      if (found !== undefined) return found;
    }
  }
  return undefined;
}
