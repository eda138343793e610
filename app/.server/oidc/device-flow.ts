import { createHash } from "node:crypto";
import type { IncomingMessage } from "node:http";
import type Provider from "oidc-provider";
import type { KeyValueStore } from "../cache/store";

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
