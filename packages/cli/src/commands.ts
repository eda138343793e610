import { readFileSync } from "node:fs";
import { operationHelp, operations, PortaNotFoundError, type CallOptions, type FieldSpec, type OperationSpec, type PortaAdmin } from "@porta/admin-client";
import { camel, flagString, flagValue, kebab, type ParsedArgs } from "./args";
import { UsageError } from "./config";
import { didYouMean } from "./suggest";

/**
 * `porta <area> <operation> [path values…] [--field value…]`, generic over the generated
 * operation table, so every Admin API operation has a command as soon as the client is
 * regenerated. Friendly aliases (`orgs`, `apps`, `claims`, `ls`, `show`) sit on top; each
 * operation's fields and their types come from the OpenAPI document (`operationHelp`).
 */
type Spec = OperationSpec;

const AREA_ALIASES: Record<string, string> = {
  orgs: "organizations",
  org: "organizations",
  apps: "applications",
  app: "applications",
  user: "usersById",
  claims: "customClaims",
  "2fa": "twoFactor",
};
const VERB_ALIASES: Record<string, string> = { ls: "list", show: "get", rm: "delete", history: "getHistory" };
/** Shorter flags for path parameters. */
const PARAM_FLAGS: Record<string, string[]> = { orgId: ["org", "org-id"], appId: ["app", "app-id"], userId: ["user", "user-id"], claimId: ["claim", "claim-id"] };
/** Shorter flags for an organization filter or field (`porta keys list --org ID`, `porta clients create --org acme`). */
const FIELD_FLAGS: Record<string, string[]> = { organizationId: ["org", "org-id"] };
const GLOBAL_FLAGS = new Set(["json", "server", "profile", "all", "help", "if-match", "data", "file", "timeout", "no-browser", "headless", "device"]);
/** Commands that are not Admin API operations. */
export const BUILTIN_COMMANDS = ["login", "logout", "whoami", "operations", "help", "plan", "apply", "export", "import-users"];

export const specs = operations as Record<string, Spec>;
const help = operationHelp as Record<string, { summary: string; fields: readonly FieldSpec[] } | undefined>;

export const fieldsOf = (id: string): readonly FieldSpec[] => help[id]?.fields ?? [];
export const summaryOf = (id: string): string => help[id]?.summary ?? "";

/** An upload body from --file: multipart operations get it as the form field `file`. */
function fileBody(spec: Spec, file: string | undefined, id: string): FormData | Blob {
  if (!file) throw new UsageError(`${id} uploads a file: pass --file PATH. Usage: ${usageOf(id)}`);
  const blob = new Blob([readFileSync(file)], spec.contentType && !spec.contentType.startsWith("multipart/") ? { type: spec.contentType } : {});
  if (!spec.contentType?.startsWith("multipart/")) return blob;
  const form = new FormData();
  form.set("file", blob, file.split(/[\\/]/).pop());
  return form;
}

export function namespaces(): string[] {
  return [...new Set(Object.keys(specs).map((id) => id.slice(0, id.indexOf("."))))];
}

/** The namespace an area names (`orgs`, `custom-claims`, `customClaims`), if any. */
export function areaOf(area: string): string | undefined {
  return AREA_ALIASES[area] ?? namespaces().find((n) => n === area || kebab(n) === area);
}

export const operationsOf = (ns: string): string[] => Object.keys(specs).filter((id) => id.startsWith(`${ns}.`));

export function resolveOperation(area: string, verb: string): string | undefined {
  const ns = areaOf(area);
  if (!ns) return undefined;
  const name = VERB_ALIASES[verb] ?? camel(verb);
  const id = `${ns}.${name}`;
  return specs[id] ? id : undefined;
}

/** Every word that names an area or a command, for suggestions. */
function areaWords(): string[] {
  return [...BUILTIN_COMMANDS, ...namespaces().map(kebab), ...Object.keys(AREA_ALIASES)];
}

/** The unknown area, as a usage error that names the nearest command. */
export function unknownArea(area: string): UsageError {
  return new UsageError(`Unknown command \`porta ${area}\`.${didYouMean(area, areaWords(), (c) => `porta ${c}`)} \`porta help\` lists the commands.`);
}

/** The operation of an area, or a usage error that names the nearest one. */
export function operationOf(area: string, verb: string): string {
  const ns = areaOf(area);
  if (!ns) throw unknownArea(area);
  const id = resolveOperation(area, verb);
  if (id) return id;
  const verbs = [...operationsOf(ns).map((op) => kebab(op.slice(ns.length + 1))), ...Object.keys(VERB_ALIASES).filter((alias) => specs[`${ns}.${VERB_ALIASES[alias]}`])];
  throw new UsageError(`\`porta ${area}\` has no operation \`${verb}\`.${didYouMean(verb, verbs, (c) => `porta ${area} ${c}`)} \`porta ${area} --help\` lists them.`);
}

export function usageOf(id: string): string {
  const spec = specs[id]!;
  const [ns, name] = id.split(".") as [string, string];
  const params = spec.pathParams.map((p) => `<${p}>`).join(" ");
  const input = spec.input === "body" ? " [--field value… | --data JSON]" : spec.input === "query" ? " [--param value…]" : spec.input === "raw" ? " --file PATH" : "";
  return `porta ${kebab(ns)} ${kebab(name)}${params ? ` ${params}` : ""}${input}`;
}

/** Whether a field holds an organization's id (which the CLI also takes as a slug). */
export function isOrganizationField(id: string, field: Pick<FieldSpec, "name" | "in">): boolean {
  if (field.in === "path") return field.name === "orgId" || (field.name === "id" && id.startsWith("organizations."));
  return field.name === "organizationId";
}

/** The flags that set a field: `--page-size` (and `--pageSize`) for pageSize, plus the short forms. */
export function flagsOf(field: Pick<FieldSpec, "name" | "in">): string[] {
  const short = field.in === "path" ? (PARAM_FLAGS[field.name] ?? []) : (FIELD_FLAGS[field.name] ?? []);
  return [...new Set([kebab(field.name), field.name, ...short])];
}

/** `porta <area> <operation> --help`: usage, summary, and every field with its type and whether it is required. */
export function helpOf(id: string): string {
  const fields = fieldsOf(id).map((field) => {
    const organization = isOrganizationField(id, field);
    const flags = flagsOf(field).filter((f) => f !== field.name || f === kebab(f));
    const name = field.in === "path" ? `<${field.name}>, ${flags.map((f) => `--${f}`).join(", ")}` : field.name === "file" && specs[id]!.input === "raw" ? "--file PATH" : flags.map((f) => `--${f}`).join(", ");
    const type = organization ? `${field.type.replace(/^string \(uuid\)/, "id (uuid) or slug")}` : field.type;
    const note = field.required ? "required" : field.default !== undefined ? `default ${field.default}` : "";
    return { name, type, note, description: field.description };
  });
  const lines = [usageOf(id), `  ${summaryOf(id)}`];
  if (fields.length > 0) {
    const nameWidth = Math.max(...fields.map((f) => f.name.length));
    const typeWidth = Math.max(...fields.map((f) => f.type.length));
    lines.push("", "Fields:");
    for (const f of fields) {
      lines.push(`  ${f.name.padEnd(nameWidth)}  ${f.type.padEnd(typeWidth)}  ${f.note}`.trimEnd());
      if (f.description) lines.push(`  ${"".padEnd(nameWidth)}  ${f.description}`);
    }
  } else {
    lines.push("", "No fields.");
  }
  const spec = specs[id]!;
  lines.push("");
  if (spec.pathParams.length > 0) lines.push("Path values go in order after the operation, or as the flags above.");
  if (fieldsOf(id).some((f) => isOrganizationField(id, f))) lines.push("An organization is named by its id or its slug.");
  if (fieldsOf(id).some((f) => /^list of|^object|JSON/.test(f.type))) lines.push(`Lists and objects are JSON: --field '["a","b"]'.`);
  if (spec.input === "body") lines.push("--data JSON gives the whole body; flags override its fields.");
  if (spec.method !== "GET") lines.push("--if-match ETAG guards a write against lost updates.");
  if (spec.paging !== "none") lines.push("--all follows every page.");
  lines.push("Global flags: --json, --server URL, --profile NAME, --timeout MS.");
  return lines.join("\n");
}

/** `porta <area> --help`: the area's operations with their usage and summary. */
export function areaHelp(ns: string): string {
  const ids = operationsOf(ns);
  const usages = ids.map(usageOf);
  const width = Math.max(...usages.map((u) => u.length));
  return [`porta ${kebab(ns)}: ${ids.length} operations (\`porta ${kebab(ns)} <operation> --help\` lists an operation's fields)`, "", ...ids.map((id, i) => `  ${usages[i]!.padEnd(width)}  ${summaryOf(id)}`)].join("\n");
}

export interface CallParts {
  pathValues: string[];
  input: Record<string, unknown> | FormData | Blob | undefined;
  options: CallOptions;
}

/** Path values, input and options of the client call, from positionals and flags. */
export function callArguments(id: string, args: ParsedArgs, positionals: string[], typed?: string): CallParts {
  const spec = specs[id]!;
  const rest = [...positionals];
  const pathValues = spec.pathParams.map((param) => {
    const fromFlag = flagsOf({ name: param, in: "path" }).map((f) => flagString(args, f)).find((v) => v !== undefined);
    const value = fromFlag ?? rest.shift();
    if (value === undefined) throw new UsageError(`Missing <${param}>. Usage: ${usageOf(id)}`);
    return value;
  });
  if (rest.length > 0) throw new UsageError(`Unexpected argument ${rest[0]}. Usage: ${usageOf(id)}`);

  const consumed = new Set(spec.pathParams.flatMap((p) => flagsOf({ name: p, in: "path" })));
  const known = fieldsOf(id).filter((f) => f.in !== "path" && !(f.name === "file" && spec.input === "raw"));
  const fieldByFlag = new Map(known.flatMap((f) => flagsOf(f).map((flag) => [flag, f] as const)));
  const fields: Array<[FieldSpec, string | true]> = [];
  for (const [flag, value] of args.flags) {
    if (GLOBAL_FLAGS.has(flag) || consumed.has(flag)) continue;
    const field = fieldByFlag.get(flag) ?? known.find((f) => f.name === camel(flag));
    if (!field) {
      const [ns, name] = id.split(".") as [string, string];
      // In the words the person typed (`porta orgs create`), else the canonical ones.
      const command = typed ?? `porta ${kebab(ns)} ${kebab(name)}`;
      const candidates = [...fieldByFlag.keys(), ...consumed].filter((f) => f === kebab(f));
      throw new UsageError(`Unknown flag --${flag} for \`${command}\`.${didYouMean(flag, candidates, (c) => `--${c}`)} \`${command} --help\` lists its fields.`);
    }
    fields.push([field, value]);
  }

  const options: CallOptions = {};
  let input: CallParts["input"];
  if (spec.input === "raw") {
    input = fileBody(spec, flagString(args, "file"), id);
    // An upload's other fields (`--kind logo`) are its query.
    if (fields.length > 0) options.query = Object.fromEntries(fields.map(([f, value]) => [f.name, value === true ? "true" : value]));
  } else if (spec.input === "query") {
    input = Object.fromEntries(fields.map(([f, value]) => [f.name, value === true ? "true" : value]));
  } else if (spec.input === "body") {
    const data = flagString(args, "data");
    const base = data ? (flagValue(data) as Record<string, unknown>) : {};
    if (typeof base !== "object" || base === null || Array.isArray(base)) throw new UsageError("--data must be a JSON object.");
    input = { ...base, ...Object.fromEntries(fields.map(([f, value]) => [f.name, flagValue(value)])) };
  }

  const ifMatch = flagString(args, "if-match");
  if (ifMatch) options.ifMatch = ifMatch.startsWith('"') ? ifMatch : `"${ifMatch}"`;
  const timeout = flagString(args, "timeout");
  if (timeout) options.timeout = Number(timeout);
  return { pathValues, input, options };
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * An organization's id from its id or its slug: a value shaped like a UUID is an id, anything
 * else is looked up by slug (the list's search, then the exact slug among its matches).
 */
export async function organizationIdOf(client: PortaAdmin, value: string, known: Map<string, string> = new Map()): Promise<string> {
  if (UUID.test(value)) return value;
  const cached = known.get(value);
  if (cached) return cached;
  const slug = value.trim().toLowerCase();
  for await (const org of client.organizations.listAll({ q: slug })) {
    if (org.slug === slug) {
      known.set(value, org.id);
      return org.id;
    }
  }
  throw new PortaNotFoundError({ status: 404, code: "not_found", message: `No organization has the slug "${value}" (name an organization by its id or its slug).` });
}

/** Replaces organization slugs with ids wherever the operation asks for an organization's id. */
async function resolveOrganizations(client: PortaAdmin, id: string, parts: CallParts): Promise<void> {
  const known = new Map<string, string>();
  const spec = specs[id]!;
  for (const [i, param] of spec.pathParams.entries()) {
    if (isOrganizationField(id, { name: param, in: "path" })) parts.pathValues[i] = await organizationIdOf(client, parts.pathValues[i]!, known);
  }
  const input = parts.input;
  if (input && !(input instanceof FormData) && !(input instanceof Blob) && typeof input.organizationId === "string") {
    input.organizationId = await organizationIdOf(client, input.organizationId, known);
  }
}

/** Runs an operation with the parts `callArguments` made (checked before any server is asked). */
export async function runOperation(client: PortaAdmin, id: string, args: ParsedArgs, parts: CallParts): Promise<unknown> {
  await resolveOrganizations(client, id, parts);
  const spec = specs[id]!;
  const callArgs = [...parts.pathValues, ...(spec.input === "none" ? [] : [parts.input]), parts.options];
  const [ns, name] = id.split(".") as [string, string];
  if (args.flags.get("all") === true && name === "list" && spec.paging !== "none") {
    const namespace = (client as unknown as Record<string, { listAll(...a: unknown[]): AsyncIterable<unknown> }>)[ns]!;
    const all: unknown[] = [];
    for await (const item of namespace.listAll(...callArgs)) all.push(item);
    return { data: all, total: all.length, page: 1, pageSize: all.length };
  }
  return client.call(id, ...callArgs);
}
