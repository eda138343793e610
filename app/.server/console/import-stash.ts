import { createHash } from "node:crypto";
import type { Collaborators } from "../context";
import { newSecret } from "./session";

/**
 * An import package between its preview and its apply: kept in the store for the console session
 * that previewed it, so that the person applies exactly the package whose change list they saw,
 * without uploading it again.
 */
const TTL_SECONDS = 30 * 60;
const key = (sessionId: string, token: string) => `console:import:${createHash("sha256").update(`${sessionId}:${token}`).digest("base64url")}`;

export async function stashImport(services: Pick<Collaborators, "store">, sessionId: string, packageText: string): Promise<string> {
  const token = newSecret();
  await services.store.set(key(sessionId, token), packageText, TTL_SECONDS);
  return token;
}

export async function takeImport(services: Pick<Collaborators, "store">, sessionId: string, token: string): Promise<string | null> {
  return token ? services.store.take(key(sessionId, token)) : null;
}
