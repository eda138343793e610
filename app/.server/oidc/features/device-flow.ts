import { createHash } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import type Provider from "oidc-provider";
import type { CookiesSetOptions, KoaContextWithOIDC } from "oidc-provider";
import { BOT_CHALLENGE_FIELD, type BotChallenge, type BotChallengeFailure } from "~/schemas/bot-challenge";
import { DEVICE_CODE_GRANT } from "~/schemas/client";
import { requestScope } from "../../request-scope";
import { codeEntryLimitKey, type CodeEntryChallenges } from "../../sign-in/bot-challenge";
import type { KeyValueStore } from "../../cache/store";
import type { RateLimits } from "../../rate-limit/limiters";
import { LIFETIMES } from "../provider/lifetimes";
import type { TenantProvider } from "../provider/tenant-provider";
import type { Feature } from "../feature";

/**
 * The device authorization grant (RFC 8628, decision 049): what Porta adds to oidc-provider's
 * `deviceFlow`. The provider issues the codes and runs the pages' forms (edge/pages.ts renders
 * them); Porta states the polling interval, answers `slow_down` to a device that polls faster, and
 * limits how many user codes one address may try (`deviceFlowRefusal`, asked by edge/mount.ts).
 */
export const DEVICE_POLL_INTERVAL_SECONDS = 5;

/**
 * Requests to the code entry page whose address used up its attempts: the provider is handed no
 * code, and the page says to wait (edge/pages.ts) with 429.
 */
export const limitedCodeEntries = new WeakSet<IncomingMessage>();

/**
 * The organization's bot protection on a request to the code entry page (decision 091): the
 * challenge the page shows (issued when it is rendered: a right code goes on to the
 * confirmation, which needs none), and why a posted entry was refused, with the code as typed
 * (the provider was handed none) to show again.
 */
export interface CodeEntryGate {
  challenge: () => Promise<BotChallenge>;
  refused?: BotChallengeFailure;
  entered?: string;
}
export const codeEntryGates = new WeakMap<IncomingMessage, CodeEntryGate>();

const pollKey = (organizationId: string, deviceCode: string) => `device-poll:${organizationId}:${createHash("sha256").update(deviceCode, "utf8").digest("base64url")}`;

/**
 * True when the device polled again within the interval (RFC 8628 §3.5 slow_down). A second of
 * slack: a device waits the interval after the previous answer, which arrives a little after
 * its request.
 */
async function pollsTooSoon(store: KeyValueStore, organizationId: string, deviceCode: string): Promise<boolean> {
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
async function keepSessionOfShownForm(ctx: KoaContextWithOIDC, cookie: CookiesSetOptions, ttlSeconds: number): Promise<void> {
  const session = ctx.oidc.session;
  if (!session || typeof session.exp === "number") return;
  await session.save(ttlSeconds);
  // The provider's session cookie carries the session's expiry (the cookies library takes `expires`).
  const options: CookiesSetOptions & { expires: Date } = { ...cookie, expires: new Date(session.exp * 1000) };
  ctx.oidc.cookies.set(ctx.oidc.provider.cookieName("session"), session.jti, options);
}

/** The device authorization response names its interval (RFC 8628 §3.2), which the provider leaves out. */
function statePollInterval(provider: Provider): void {
  provider.use(async (ctx, next) => {
    await next();
    const body = ctx.body as Record<string, unknown> | undefined;
    if (ctx.oidc?.route === "device_authorization" && ctx.status === 200 && body && typeof body.device_code === "string") {
      body.interval = DEVICE_POLL_INTERVAL_SECONDS;
    }
  });
}

/** What the protocol handler answers instead of the provider: a JSON error. */
export interface DeviceFlowRefusal {
  status: 400;
  body: { error: string; error_description: string };
}

/**
 * The organization's bot protection on the code entry page (decision 091). A page load, and a
 * posted entry, that the policy asks a proof of gets a challenge for the page. A posted entry
 * without a valid proof is handed to the provider without its code (audited and counted by
 * `challenges.check`); the page says why, with 403 (503 when the replay store did not answer)
 * and a fresh challenge. Returns false for a refused entry: nothing else is done for it, no
 * code-entry point spent either, like the sign-in forms count no failure for a refused proof.
 * The confirmation's posts (`confirm`, `abort`) carry a code already accepted and are not asked again.
 */
async function passesCodeEntryChallenge(
  req: IncomingMessage & { body?: Record<string, unknown> },
  body: Record<string, unknown> | undefined,
  target: { path: string; ip: string | undefined },
  tenant: TenantProvider,
  challenges: CodeEntryChallenges,
): Promise<boolean> {
  const organization = tenant.organization;
  const entry = req.method === "POST" && body !== undefined && typeof body.user_code === "string" && body.confirm === undefined && body.abort === undefined;
  if (!entry && req.method !== "GET") return true;
  if (!(await challenges.required(organization, target.ip ?? null))) return true;
  const gate: CodeEntryGate = { challenge: () => challenges.issue(organization) };
  codeEntryGates.set(req, gate);
  if (!entry) return true;
  const verdict = await challenges.check(organization, body[BOT_CHALLENGE_FIELD], { ip: target.ip ?? null, requestId: requestScope()?.requestId ?? null });
  if (verdict.ok) return true;
  gate.refused = verdict.reason;
  gate.entered = body.user_code as string;
  body.user_code = "";
  return false;
}

/**
 * RFC 8628 (decision 049): a device that polls the token endpoint again within the interval is
 * told `slow_down`; a browser that used up its code entries is handed to the provider without
 * a code, and the page says to wait (edge/pages.ts); so is one whose entry lacks the proof the
 * organization's bot protection asks for. `target.path` is the canonical one.
 */
export async function deviceFlowRefusal(
  req: IncomingMessage & { body?: Record<string, unknown> },
  res: ServerResponse,
  target: { path: string; ip: string | undefined },
  tenant: TenantProvider,
  store: KeyValueStore,
  limits: RateLimits | undefined,
  challenges?: CodeEntryChallenges,
): Promise<DeviceFlowRefusal | undefined> {
  const body = req.body;
  if (target.path === "/auth/token" && body?.grant_type === DEVICE_CODE_GRANT && typeof body.device_code === "string" && body.device_code !== "") {
    if (!(await pollsTooSoon(store, tenant.organization.id, body.device_code))) return undefined;
    return { status: 400, body: { error: "slow_down", error_description: "The device polls too often: wait 5 seconds longer between requests." } };
  }
  if (target.path === "/device" && challenges && !(await passesCodeEntryChallenge(req, body, target, tenant, challenges))) return undefined;
  if (target.path === "/device" && limits && body && typeof body.user_code === "string" && body.confirm === undefined && body.abort === undefined) {
    const outcome = await limits.consume("deviceCodeEntryIp", codeEntryLimitKey(tenant.organization.id, target.ip));
    if (!outcome.allowed) {
      body.user_code = "";
      limitedCodeEntries.add(req);
      res.setHeader("Retry-After", String(outcome.retryAfterSeconds));
    }
  }
  return undefined;
}

/** RFC 8628 for clients that have the grant type (decision 049), on Porta's own pages (edge/pages.ts). */
export const deviceFlow: Feature = {
  name: "device-flow",
  configuration: ({ pages, sessionCookie }) => ({
    features: {
      deviceFlow: {
        enabled: true,
        charset: "base-20",
        mask: "****-****",
        async userCodeInputSource(ctx, form, out, err) {
          if (err) await keepSessionOfShownForm(ctx, sessionCookie, LIFETIMES.Session);
          return pages.userCodeInputSource(ctx, form, out, err);
        },
        userCodeConfirmSource: pages.userCodeConfirmSource,
        successSource: pages.successSource,
      },
    },
  }),
  patches: [statePollInterval],
};
