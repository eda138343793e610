import type { HttpMethod, Operation } from "./route";

/**
 * Matches a request against the operation table, so that each path is written once (in its
 * operation) and served by the one splat route `app/routes/api.admin.$.ts`. Where templates
 * overlap, the one with a literal segment earlier wins (`/organizations/validate-slug` over
 * `/organizations/{id}`), as Remix ranks route files.
 */
export type RouteMatch =
  | { kind: "found"; op: Operation; params: Record<string, string> }
  | { kind: "method_not_allowed"; allow: HttpMethod[] }
  | { kind: "not_found" };

interface CompiledPath {
  template: string;
  /** A literal segment, or the name of a parameter. */
  segments: Array<{ literal: string } | { param: string }>;
  byMethod: Map<HttpMethod, Operation>;
}

function compile(template: string): CompiledPath["segments"] {
  return template
    .split("/")
    .filter(Boolean)
    .map((segment) => {
      const param = /^\{(\w+)\}$/.exec(segment);
      return param ? { param: param[1]! } : { literal: segment };
    });
}

/** Literal segments rank before parameters, position by position. */
function moreSpecific(a: CompiledPath, b: CompiledPath): number {
  for (let i = 0; i < Math.min(a.segments.length, b.segments.length); i++) {
    const aLiteral = "literal" in a.segments[i]! ? 1 : 0;
    const bLiteral = "literal" in b.segments[i]! ? 1 : 0;
    if (aLiteral !== bLiteral) return bLiteral - aLiteral;
  }
  return 0;
}

export function createRouter(operations: readonly Operation[]) {
  const byTemplate = new Map<string, CompiledPath>();
  for (const op of operations) {
    const entry = byTemplate.get(op.path) ?? { template: op.path, segments: compile(op.path), byMethod: new Map() };
    if (entry.byMethod.has(op.method)) throw new Error(`two operations serve ${op.method} ${op.path}`);
    entry.byMethod.set(op.method, op);
    byTemplate.set(op.path, entry);
  }
  const bySegmentCount = new Map<number, CompiledPath[]>();
  for (const entry of byTemplate.values()) {
    const list = bySegmentCount.get(entry.segments.length) ?? [];
    list.push(entry);
    bySegmentCount.set(entry.segments.length, list);
  }
  for (const list of bySegmentCount.values()) list.sort(moreSpecific);

  return {
    /** `path` is below /api/admin, with each segment already percent-decoded. */
    match(method: string, segments: string[]): RouteMatch {
      for (const entry of bySegmentCount.get(segments.length) ?? []) {
        const params: Record<string, string> = {};
        const fits = entry.segments.every((segment, i) => {
          if ("literal" in segment) return segment.literal === segments[i];
          params[segment.param] = segments[i]!;
          return segments[i] !== "";
        });
        if (!fits) continue;
        const op = entry.byMethod.get(method.toUpperCase() as HttpMethod);
        return op ? { kind: "found", op, params } : { kind: "method_not_allowed", allow: [...entry.byMethod.keys()] };
      }
      return { kind: "not_found" };
    },
  };
}
