/**
 * A small argument parser: the flags of a generic operation command are open-ended (they come
 * from the generated operation table), which node's parseArgs cannot express without treating
 * `--name value` as a boolean plus a positional.
 */
export interface ParsedArgs {
  positionals: string[];
  flags: Map<string, string | true>;
}

const BOOLEAN_FLAGS = new Set(["json", "headless", "all", "help", "no-browser", "version", "device", "prune"]);

export function parseArgs(argv: string[]): ParsedArgs {
  const positionals: string[] = [];
  const flags = new Map<string, string | true>();
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === "--") {
      positionals.push(...argv.slice(i + 1));
      break;
    }
    if (arg.startsWith("--")) {
      const eq = arg.indexOf("=");
      if (eq > 0) flags.set(arg.slice(2, eq), arg.slice(eq + 1));
      else {
        const name = arg.slice(2);
        const next = argv[i + 1];
        if (BOOLEAN_FLAGS.has(name) || next === undefined || next.startsWith("--")) flags.set(name, true);
        else {
          flags.set(name, next);
          i++;
        }
      }
    } else if (arg === "-h") flags.set("help", true);
    else if (arg === "-f" && argv[i + 1] !== undefined) flags.set("file", argv[++i]!);
    else positionals.push(arg);
  }
  return { positionals, flags };
}

export function flagString(args: ParsedArgs, name: string): string | undefined {
  const value = args.flags.get(name);
  return typeof value === "string" ? value : undefined;
}

/** `--page-size` → `pageSize`. */
export const camel = (name: string) => name.replace(/-([a-z])/g, (_m, c: string) => c.toUpperCase());
/** `getHistory` → `get-history`. */
export const kebab = (name: string) => name.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`);

/** A flag value as JSON when it parses (numbers, booleans, arrays, objects), else as text. */
export function flagValue(value: string | true): unknown {
  if (value === true) return true;
  try {
    return JSON.parse(value);
  } catch {
    return value;
  }
}
