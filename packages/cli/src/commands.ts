import { readFileSync } from "node:fs";
import { operations, type CallOptions, type OperationSpec, type PortaAdmin } from "@porta/admin-client";
import { camel, flagString, flagValue, kebab, type ParsedArgs } from "./args";
import { UsageError } from "./config";

/**
 * `porta <area> <operation> [path values…] [--field value…]`, generic over the generated
 * operation table, so every Admin API operation has a command as soon as the client is
 * regenerated. Friendly aliases (`orgs`, `apps`, `claims`, `ls`, `show`) sit on top.
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
/** Shorter flags for the organization filter of reads (`porta keys list --org ID`). */
const QUERY_FLAGS: Record<string, string> = { org: "organizationId", "org-id": "organizationId" };
const GLOBAL_FLAGS = new Set(["json", "server", "profile", "all", "help", "if-match", "data", "file", "timeout", "no-browser", "headless"]);

export const specs = operations as Record<string, Spec>;

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

export function resolveOperation(area: string, verb: string): string | undefined {
  const ns = AREA_ALIASES[area] ?? namespaces().find((n) => n === area || kebab(n) === area);
  if (!ns) return undefined;
  const name = VERB_ALIASES[verb] ?? camel(verb);
  const id = `${ns}.${name}`;
  return specs[id] ? id : undefined;
}

export function usageOf(id: string): string {
  const spec = specs[id]!;
  const [ns, name] = id.split(".") as [string, string];
  const params = spec.pathParams.map((p) => `<${p}>`).join(" ");
  const input = spec.input === "body" ? " [--field value… | --data JSON]" : spec.input === "query" ? " [--param value…]" : spec.input === "raw" ? " --file PATH" : "";
  return `porta ${kebab(ns)} ${kebab(name)}${params ? ` ${params}` : ""}${input}`;
}

/** The positional arguments of the client call: path values, input, options. */
export function callArguments(id: string, args: ParsedArgs, positionals: string[]): { callArgs: unknown[]; options: CallOptions } {
  const spec = specs[id]!;
  const rest = [...positionals];
  const pathValues = spec.pathParams.map((param) => {
    const fromFlag = [param, kebab(param), ...(PARAM_FLAGS[param] ?? [])].map((f) => flagString(args, f)).find((v) => v !== undefined);
    const value = fromFlag ?? rest.shift();
    if (value === undefined) throw new UsageError(`Missing <${param}>. Usage: ${usageOf(id)}`);
    return value;
  });
  if (rest.length > 0) throw new UsageError(`Unexpected argument ${rest[0]}. Usage: ${usageOf(id)}`);

  const consumed = new Set(spec.pathParams.flatMap((p) => [p, kebab(p), ...(PARAM_FLAGS[p] ?? [])]));
  const fields = [...args.flags].filter(([name]) => !GLOBAL_FLAGS.has(name) && !consumed.has(name));
  let input: Record<string, unknown> | FormData | Blob | undefined;
  if (spec.input === "raw") {
    input = fileBody(spec, flagString(args, "file"), id);
  } else if (spec.input === "query") {
    input = Object.fromEntries(fields.map(([name, value]) => [QUERY_FLAGS[name] ?? camel(name), value === true ? "true" : value]));
  } else if (spec.input === "body") {
    const data = flagString(args, "data");
    const base = data ? (flagValue(data) as Record<string, unknown>) : {};
    if (typeof base !== "object" || base === null) throw new UsageError("--data must be a JSON object.");
    input = { ...base, ...Object.fromEntries(fields.map(([name, value]) => [camel(name), flagValue(value)])) };
  } else if (fields.length > 0) {
    throw new UsageError(`${id} takes no --${fields[0]![0]}. Usage: ${usageOf(id)}`);
  }

  const options: CallOptions = {};
  const ifMatch = flagString(args, "if-match");
  if (ifMatch) options.ifMatch = ifMatch.startsWith('"') ? ifMatch : `"${ifMatch}"`;
  const timeout = flagString(args, "timeout");
  if (timeout) options.timeout = Number(timeout);
  return { callArgs: [...pathValues, ...(spec.input === "none" ? [] : [input]), options], options };
}

export async function runOperation(client: PortaAdmin, id: string, args: ParsedArgs, positionals: string[]): Promise<unknown> {
  const { callArgs } = callArguments(id, args, positionals);
  const [ns, name] = id.split(".") as [string, string];
  if (args.flags.get("all") === true && name === "list" && specs[id]!.paging !== "none") {
    const namespace = (client as unknown as Record<string, { listAll(...a: unknown[]): AsyncIterable<unknown> }>)[ns]!;
    const all: unknown[] = [];
    for await (const item of namespace.listAll(...callArgs)) all.push(item);
    return { data: all, total: all.length, page: 1, pageSize: all.length };
  }
  return client.call(id, ...callArgs);
}
