/**
 * How deeply a JSON value read from a request may nest arrays and objects. Far beyond any
 * document Porta takes (an import package nests about ten levels, a custom claim value a few
 * more), and far below what recursive code survives: a few thousand levels overflow the stack
 * of V8's JSON.stringify, zod's z.json() and any walk written as a recursion. JSON.parse does not
 * recurse, but deep nesting is slow for it (a megabyte of "[" costs it about 1.5 s of CPU), so a
 * body's text is measured before it is parsed where Porta reads the text itself, and a parsed
 * value before anything walks it everywhere else.
 */
export const MAX_JSON_DEPTH = 64;

export const TOO_DEEP_MESSAGE = `The body nests arrays or objects more than ${MAX_JSON_DEPTH} levels deep.`;

/**
 * True when JSON text opens arrays or objects more than `limit` levels deep, counted outside
 * strings: for valid JSON the same answer as `nestsDeeperThan` on its parsed value. One scan that
 * stops at the first level past the limit; text that is not JSON is left to the parser.
 */
export function textNestsDeeperThan(text: string, limit: number = MAX_JSON_DEPTH): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c /* \ */) i++;
      else if (c === 0x22 /* " */) inString = false;
    } else if (c === 0x22) {
      inString = true;
    } else if (c === 0x5b /* [ */ || c === 0x7b /* { */) {
      if (++depth > limit) return true;
    } else if (c === 0x5d /* ] */ || c === 0x7d /* } */) {
      depth--;
    }
  }
  return false;
}

/**
 * True when `value` nests arrays or objects more than `limit` levels deep (a bare `[]` is one
 * level). One pass without recursion that stops at the first container past the limit, so the
 * work is at most a visit per value of the body, whatever its shape.
 */
export function nestsDeeperThan(value: unknown, limit: number = MAX_JSON_DEPTH): boolean {
  const pending: Array<{ node: object; level: number }> = [];
  if (typeof value === "object" && value !== null) pending.push({ node: value, level: 1 });
  while (pending.length > 0) {
    const { node, level } = pending.pop()!;
    if (level > limit) return true;
    for (const child of Array.isArray(node) ? (node as unknown[]) : Object.values(node)) {
      if (typeof child === "object" && child !== null) pending.push({ node: child, level: level + 1 });
    }
  }
  return false;
}
