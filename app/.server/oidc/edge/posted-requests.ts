import { randomBytes } from "node:crypto";
import type { KeyValueStore } from "../../cache/store";

/**
 * POST at the authorization endpoint (OpenID Connect Core §3.1.2.1) and at the end-session
 * endpoint (RP-Initiated Logout §2), without giving up the session cookie's SameSite=Lax
 * (decision 043). A cross-site POST does not carry a Lax cookie, so the provider would not see
 * the person's session; a top-level GET does. The posted parameters are therefore parked in the
 * ephemeral store under a random handle, and the browser is sent on with 303 to the same
 * endpoint carrying only the handle; that GET takes the parameters back (once) and the provider
 * answers it as if they had come in the query. Nothing the relying party posted appears in the
 * URL, the browser's history or a log.
 */
export const POSTABLE_PATHS = new Set(["/auth/authorize", "/session/end"]);
const HANDLE = "porta_post";
/** Long enough for a slow redirect, short enough that a handle is useless later. */
const PARKED_SECONDS = 120;

const keyOf = (organizationId: string, handle: string) => `oidc:posted:${organizationId}:${handle}`;

type Form = Record<string, unknown>;

/** Parks the posted form; returns the path (with the handle) to send the browser to. */
export async function parkPostedRequest(store: KeyValueStore, organizationId: string, path: string, form: Form | undefined): Promise<string> {
  const params = new URLSearchParams();
  for (const [name, value] of Object.entries(form ?? {})) {
    // Repeated names stay repeated: the provider refuses them as it would in a query.
    for (const one of Array.isArray(value) ? value : [value]) if (typeof one === "string") params.append(name, one);
  }
  const handle = randomBytes(24).toString("base64url");
  await store.set(keyOf(organizationId, handle), params.toString(), PARKED_SECONDS);
  return `${path}?${HANDLE}=${handle}`;
}

/**
 * For a GET that carries only a handle: the parked parameters as a query string (taken, so a
 * handle works once), or "" when the handle is unknown or used (the provider then answers a
 * request without parameters with its own error page). Null when the request is not one.
 */
export async function takePostedRequest(store: KeyValueStore, organizationId: string, query: URLSearchParams): Promise<string | null> {
  const handle = query.get(HANDLE);
  if (handle === null || [...query.keys()].length !== 1 || !/^[A-Za-z0-9_-]{32}$/.test(handle)) return null;
  return (await store.take(keyOf(organizationId, handle))) ?? "";
}
