import { createHash } from "node:crypto";
import type { IncomingMessage } from "node:http";
import type Provider from "oidc-provider";
import type { CookiesSetOptions, KoaContextWithOIDC } from "oidc-provider";
import type { KeyValueStore } from "../../cache/store";

/**
 * The device authorization grant (RFC 8628, decision 049): what Porta adds to oidc-provider's
 * `deviceFlow`. The provider issues the codes and runs the pages' forms (pages.ts renders them);
 * Porta states the polling interval, answers `slow_down` to a device that polls faster, and
 * limits how many user codes one address may try (mount.ts).
 */
export const DEVICE_POLL_INTERVAL_SECONDS = 5;

/**
 * Requests to the code entry page whose address used up its attempts: the provider is handed no
 * code, and the page says to wait (pages.ts) with 429.
 */
export const limitedCodeEntries = new WeakSet<IncomingMessage>();

const pollKey = (organizationId: string, deviceCode: string) => `device-poll:${organizationId}:${createHash("sha256").update(deviceCode, "utf8").digest("base64url")}`;

/**
 * True when the device polled again within the interval (RFC 8628 §3.5 slow_down). A second of
 * slack: a device waits the interval after the previous answer, which arrives a little after
 * its request.
 */
export async function pollsTooSoon(store: KeyValueStore, organizationId: string, deviceCode: string): Promise<boolean> {
  return (await store.increment(pollKey(organizationId, deviceCode), DEVICE_POLL_INTERVAL_SECONDS - 1)) > 1;
}

/**
 * After an error on the code entry page (a form posted without the browser's session cookie,
 * a device sign-in resumed without its cookies, a wrong code) the provider shows the form again
 * with a new secret in the browser's session, and saves that session once it has answered. A
 * session it never stored (the request brought no cookie) cannot be saved that way: the provider
 * threw ("persist can only be called on previously persisted Sessions") and the person got a
 * bare 500. Such a session is stored here with its cookie, as the provider stores the session of
 * every first visit to the page, so the form shown works on the next try.
 */
export async function keepSessionOfShownForm(ctx: KoaContextWithOIDC, cookie: CookiesSetOptions, ttlSeconds: number): Promise<void> {
  const session = ctx.oidc.session;
  if (!session || typeof session.exp === "number") return;
  await session.save(ttlSeconds);
  // The provider's session cookie carries the session's expiry (the cookies library takes `expires`).
  const options: CookiesSetOptions & { expires: Date } = { ...cookie, expires: new Date(session.exp * 1000) };
  ctx.oidc.cookies.set(ctx.oidc.provider.cookieName("session"), session.jti, options);
}

/** The device authorization response names its interval (RFC 8628 §3.2), which the provider leaves out. */
export function statePollInterval(provider: Provider): void {
  provider.use(async (ctx, next) => {
    await next();
    const body = ctx.body as Record<string, unknown> | undefined;
    if (ctx.oidc?.route === "device_authorization" && ctx.status === 200 && body && typeof body.device_code === "string") {
      body.interval = DEVICE_POLL_INTERVAL_SECONDS;
    }
  });
}
