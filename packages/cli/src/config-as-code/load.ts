import { readFileSync } from "node:fs";
import { parseDocument } from "yaml";
import type { z } from "zod";
import { UsageError } from "../config";
import { ConfigSchema, type Config, type FromEnv } from "./schema";

/** A loaded file: the configuration, and each secret's value by the variable that holds it. */
export interface LoadedConfig {
  config: Config;
  secrets: Map<string, string>;
}

const pathOf = (path: ReadonlyArray<PropertyKey>) => path.reduce<string>((text, part) => (typeof part === "number" ? `${text}[${part}]` : text ? `${text}.${String(part)}` : String(part)), "");

export function issuesOf(error: z.ZodError): string[] {
  return error.issues.map((issue) => `  ${pathOf(issue.path) || "(file)"}: ${issue.message}`);
}

/** Every `{ fromEnv: NAME }` in the configuration. */
export function secretReferences(config: Config): FromEnv[] {
  const found: FromEnv[] = [];
  for (const org of config.organizations) for (const provider of org.identityProviders ?? []) if (provider.clientSecret) found.push(provider.clientSecret);
  return found;
}

/** Parses and checks a configuration's text; every missing environment variable is named before anything is read or changed. */
export function parseConfig(text: string, source: string, env: Readonly<Record<string, string | undefined>> = process.env): LoadedConfig {
  const doc = parseDocument(text, { prettyErrors: true });
  if (doc.errors.length > 0) throw new UsageError(`${source} is not valid YAML:\n${doc.errors.map((e) => `  ${e.message}`).join("\n")}`);
  const parsed = ConfigSchema.safeParse(doc.toJS());
  if (!parsed.success) throw new UsageError(`${source} does not match the configuration's schema:\n${issuesOf(parsed.error).join("\n")}`);
  const secrets = new Map<string, string>();
  const missing = new Set<string>();
  for (const { fromEnv } of secretReferences(parsed.data)) {
    const value = env[fromEnv];
    if (value === undefined || value === "") missing.add(fromEnv);
    else secrets.set(fromEnv, value);
  }
  if (missing.size > 0) throw new UsageError(`${source} names secrets in environment variables that are not set: ${[...missing].join(", ")}. Nothing was changed.`);
  return { config: parsed.data, secrets };
}

export function loadConfig(file: string, env: Readonly<Record<string, string | undefined>> = process.env): LoadedConfig {
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (error) {
    throw new UsageError(`Cannot read ${file}: ${error instanceof Error ? error.message : String(error)}`);
  }
  return parseConfig(text, file, env);
}
