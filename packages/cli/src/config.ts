import { homedir } from "node:os";
import path from "node:path";
import { readCredentialsFile, type StoredCredentials } from "@porta/admin-client";
import { flagString, type ParsedArgs } from "./args";

/** Where the CLI keeps its credentials: $PORTA_CONFIG_DIR, else $XDG_CONFIG_HOME/porta, else ~/.config/porta. */
export function configDir(): string {
  if (process.env.PORTA_CONFIG_DIR) return process.env.PORTA_CONFIG_DIR;
  return path.join(process.env.XDG_CONFIG_HOME || path.join(homedir(), ".config"), "porta");
}

export const credentialsFile = () => path.join(configDir(), "credentials.json");

export function profileOf(args: ParsedArgs): string {
  return flagString(args, "profile") ?? process.env.PORTA_PROFILE ?? "default";
}

export async function storedProfile(args: ParsedArgs): Promise<StoredCredentials | undefined> {
  return (await readCredentialsFile(credentialsFile())).profiles[profileOf(args)];
}

export class UsageError extends Error {}

/** --server, else $PORTA_SERVER, else the server the profile logged in to. */
export async function serverOf(args: ParsedArgs): Promise<string> {
  const server = flagString(args, "server") ?? process.env.PORTA_SERVER ?? (await storedProfile(args))?.server;
  if (!server) throw new UsageError("No server: pass --server https://porta.example.com (or run `porta login --server ...` first).");
  if (!/^https?:\/\/[^/]/i.test(server) || !URL.canParse(server)) throw new UsageError(`The server must be an http:// or https:// URL (got "${server}").`);
  return server.replace(/\/+$/, "");
}
