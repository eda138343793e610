import type { Client } from "~/generated/prisma/client";

const isLoopback = (host: string) => host === "localhost" || host === "127.0.0.1" || host === "[::1]";

/**
 * Where "sign in again" sends a person whose flow ended on one of Porta's pages (a changed
 * password, a used link): the application's own address, where its sign-in starts. Porta cannot
 * restart an authorization itself (the client owns state, nonce and PKCE), and a client has no
 * home URL of its own, so this is the origin of its first web redirect URI: registered by an
 * operator, never taken from the request. Native apps (custom schemes) and inactive clients have none.
 */
export function applicationHome(client: Pick<Client, "redirectUris" | "status"> | null): string | null {
  if (!client || client.status !== "active") return null;
  for (const uri of client.redirectUris) {
    let url: URL;
    try {
      url = new URL(uri);
    } catch {
      continue;
    }
    if (url.protocol === "https:" || (url.protocol === "http:" && isLoopback(url.hostname))) return `${url.origin}/`;
  }
  return null;
}
