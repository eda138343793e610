/**
 * Where a browser session was last used from, so a person can tell their sessions apart on the
 * account page. Set around each request a provider serves (mount.ts); the ephemeral adapter keeps
 * it beside the session, never inside the provider's own payload.
 */
export interface RequestDevice {
  ip: string | null;
  userAgent: string | null;
}

/** The part of a User-Agent header worth keeping: bounded, printable. */
export function keptUserAgent(value: string | undefined): string | null {
  if (!value) return null;
  const printable = value.replace(/[^\x20-\x7e]/g, "").trim();
  return printable ? printable.slice(0, 256) : null;
}
