import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import path from "node:path";

/**
 * The project's own import graph, read from the sources (value imports and re-exports only:
 * `import type` is erased before anything runs; `{ types: true }` counts it too), and its
 * cycles. Enough for the architecture test; it resolves relative specifiers and the `~/` alias,
 * and ignores packages.
 */
const EXTENSIONS = [".ts", ".tsx", "/index.ts", "/index.tsx"];
const IMPORT = /^\s*(?:import|export)\s+(?!type\b)(?:[^'"]*?\s+from\s+)?["']([^"']+)["']/gm;
const ANY_IMPORT = /^\s*(?:import|export)\s+(?:[^'"]*?\s+from\s+)?["']([^"']+)["']/gm;

function sourceFiles(dir: string, out: string[] = []): string[] {
  for (const name of readdirSync(dir)) {
    const full = path.join(dir, name);
    if (name === "node_modules" || name === "generated") continue;
    if (statSync(full).isDirectory()) sourceFiles(full, out);
    else if (/\.tsx?$/.test(name) && !/\.test\.tsx?$/.test(name)) out.push(full);
  }
  return out;
}

function resolve(from: string, specifier: string, appDir: string): string | undefined {
  const base = specifier.startsWith("~/") ? path.join(appDir, specifier.slice(2)) : specifier.startsWith(".") ? path.resolve(path.dirname(from), specifier) : undefined;
  if (!base) return undefined;
  if (/\.tsx?$/.test(base) && existsSync(base)) return base;
  for (const ext of EXTENSIONS) if (existsSync(base + ext)) return base + ext;
  return undefined;
}

export function importGraph(root: string, dirs: string[], options: { types?: boolean } = {}): Map<string, string[]> {
  const appDir = path.join(root, "app");
  const graph = new Map<string, string[]>();
  for (const file of dirs.flatMap((dir) => sourceFiles(path.join(root, dir)))) {
    const source = readFileSync(file, "utf8");
    // Only the lines that begin a statement: a multi-line `import type {` block never matches.
    const text = options.types ? source : source.replace(/import\s+type\s*\{[^}]*\}\s*from\s*["'][^"']+["'];?/g, "");
    const targets = [...text.matchAll(options.types ? ANY_IMPORT : IMPORT)].map((m) => resolve(file, m[1]!, appDir)).filter((t): t is string => Boolean(t));
    graph.set(file, [...new Set(targets)]);
  }
  return graph;
}

/** Every strongly connected set of more than one file (or a file importing itself). */
export function cycles(graph: Map<string, string[]>): string[][] {
  let index = 0;
  const indices = new Map<string, number>();
  const lowlink = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  const visit = (node: string) => {
    indices.set(node, index);
    lowlink.set(node, index);
    index += 1;
    stack.push(node);
    onStack.add(node);
    for (const next of graph.get(node) ?? []) {
      if (!indices.has(next)) {
        visit(next);
        lowlink.set(node, Math.min(lowlink.get(node)!, lowlink.get(next)!));
      } else if (onStack.has(next)) {
        lowlink.set(node, Math.min(lowlink.get(node)!, indices.get(next)!));
      }
    }
    if (lowlink.get(node) === indices.get(node)) {
      const component: string[] = [];
      let member: string;
      do {
        member = stack.pop()!;
        onStack.delete(member);
        component.push(member);
      } while (member !== node);
      if (component.length > 1 || (graph.get(node) ?? []).includes(node)) found.push(component.sort());
    }
  };
  for (const node of graph.keys()) if (!indices.has(node)) visit(node);
  return found;
}
