import type { Logger } from "pino";
import type { PrismaClient } from "~/generated/prisma/client";
import type { JobQueue } from "../../jobs/queue";
import type Provider from "oidc-provider";
import type { ProviderRegistry } from "../provider/tenant-provider";
import type { Feature, LogoutNotice, PatchContext } from "../feature";

export type { LogoutNotice } from "../feature";

/**
 * OpenID Back-Channel Logout 1.0 (decision 048). When a session ends, each client
 * of it that registered a `backchannel_logout_uri` is told with a logout token. Telling is a job
 * (`backchannel-logout`, retried on its own schedule), never a request inside the one that ended
 * the session: a receiver that is slow or down must neither hold up a sign-out nor lose its notice.
 * The token itself is made and sent by the organization's provider at each attempt (ES256 with the
 * organization's key, `typ: logout+jwt`, the `events` claim, no nonce, a fresh `jti` and `iat`),
 * through its outbound guard (outbound/guard.ts: special-use addresses refused on the connected
 * socket, 2.5 s timeout, no redirects).
 */
export interface LogoutNotices {
  /** Queues a logout token for each notice whose client takes them. Never throws: a failure is logged. */
  send(notices: LogoutNotice[]): Promise<void>;
}

export function createLogoutNotices(prisma: PrismaClient, jobs: Pick<JobQueue, "enqueue">, logger: Logger): LogoutNotices {
  return {
    async send(notices) {
      if (notices.length === 0) return;
      try {
        const clientIds = [...new Set(notices.map((n) => n.clientId))];
        const takers = await prisma.client.findMany({ where: { id: { in: clientIds }, backchannelLogoutUri: { not: null } }, select: { id: true, organizationId: true } });
        const takes = new Set(takers.map((c) => `${c.organizationId} ${c.id}`));
        const seen = new Set<string>();
        for (const notice of notices) {
          const key = `${notice.organizationId} ${notice.clientId} ${notice.sub} ${notice.sid ?? ""}`;
          if (!takes.has(`${notice.organizationId} ${notice.clientId}`) || seen.has(key)) continue;
          seen.add(key);
          const id = await jobs.enqueue("backchannel-logout", notice);
          if (!id) logger.warn({ organizationId: notice.organizationId, clientId: notice.clientId }, "back-channel logout not queued: the queue is full");
        }
      } catch (error) {
        logger.warn({ err: { message: (error as Error).message } }, "could not queue back-channel logout notices");
      }
    },
  };
}

/** What a logout notice needs of a provider's session as the store keeps it. */
export interface StoredSession {
  accountId?: string;
  authorizations?: Record<string, { sid?: string; grantId?: string }>;
}

export function parseStoredSession(text: string | null | undefined): StoredSession | null {
  if (!text) return null;
  try {
    return JSON.parse(text) as StoredSession;
  } catch {
    return null;
  }
}

/**
 * The notices for ending `sessions` (the provider's sessions as the store keeps them) of one user:
 * one per client and session, with its sid. Clients of `grantClientIds` that none of these
 * sessions names (a refresh token outlives the browser session) are told with the user alone,
 * which at the client means every session of that user (Back-Channel Logout §2.4).
 */
export function noticesForSessions(organizationId: string, userId: string, sessions: Array<StoredSession | null>, grantClientIds: string[] = []): LogoutNotice[] {
  const notices: LogoutNotice[] = [];
  const named = new Set<string>();
  for (const session of sessions) {
    if (!session || session.accountId !== userId) continue;
    for (const [clientId, authorization] of Object.entries(session.authorizations ?? {})) {
      named.add(clientId);
      notices.push({ organizationId, clientId, sub: userId, sid: authorization.sid ?? null });
    }
  }
  for (const clientId of new Set(grantClientIds)) {
    if (!named.has(clientId)) notices.push({ organizationId, clientId, sub: userId, sid: null });
  }
  return notices;
}

/** What the job asks for (the job table hands it just these): the organization's slug, its provider, a log line. */
export interface LogoutDeliveryDeps {
  db: { prisma: PrismaClient };
  oidc: Pick<ProviderRegistry, "get">;
  logger: Logger;
}

/** The job: the organization's provider makes the token and POSTs it; a failure throws, and the queue retries. */
export async function deliverLogoutNotice(services: LogoutDeliveryDeps, notice: LogoutNotice): Promise<void> {
  const organization = await services.db.prisma.organization.findUnique({ where: { id: notice.organizationId }, select: { slug: true } });
  // An organization deleted or suspended since has no provider: nobody is left to be told by it.
  const tenant = organization ? await services.oidc.get(organization.slug) : undefined;
  if (!tenant) return;
  const sent = await tenant.deliverBackchannelLogout(notice.clientId, notice.sub, notice.sid);
  if (sent) services.logger.info({ organizationId: notice.organizationId, clientId: notice.clientId }, "back-channel logout delivered");
}

type LogoutTokenSender = (this: InstanceType<Provider["Client"]>, sub: string, sid: string | undefined) => Promise<void>;

/** Each provider's own way of making and sending a logout token, which the job calls (`sendLogoutToken`). */
const senders = new WeakMap<Provider, LogoutTokenSender>();

/**
 * The provider would POST logout tokens inside the sign-out request, once, without retries;
 * Porta queues them instead and sends them from a job with the provider's own method.
 */
function queueLogoutTokens(provider: Provider, context: PatchContext): void {
  const prototype = provider.Client.prototype as unknown as { backchannelLogout: LogoutTokenSender };
  senders.set(provider, prototype.backchannelLogout);
  prototype.backchannelLogout = async function queueLogoutToken(sub, sid) {
    await context.onBackchannelLogout?.({ organizationId: context.organization.id, clientId: this.clientId, sub, sid: sid ?? null });
  };
}

/**
 * Makes a logout token for the client with the provider's own method and POSTs it to its
 * backchannel_logout_uri; false when the client is gone or takes none any more. Throws when the
 * receiver does not answer 200 or 204.
 */
export async function sendLogoutToken(provider: Provider, clientId: string, sub: string, sid: string | null): Promise<boolean> {
  const client = await provider.Client.find(clientId);
  if (!client?.backchannelLogoutUri) return false;
  const send = senders.get(provider);
  if (!send) throw new Error("the provider was built without the back-channel logout feature");
  // The provider adds sid when the client requires it (backchannel_logout_session_required).
  await send.call(client, sub, sid ?? undefined);
  return true;
}

/**
 * A sign-out at the end-session endpoint is recorded (`auth.logout`), so that what follows from it
 * in the audit trail (a Shared Signals session-revoked, decision 093; webhooks) happens. The
 * provider ends the session itself; the answer waits until the entry is written, so a sign-out
 * that was answered is in the trail.
 */
function recordSignOut(provider: Provider, context: PatchContext): void {
  provider.use(async (ctx, next) => {
    await next();
    if (ctx.oidc?.route !== "end_session_confirm" || ctx.status !== 303) return;
    const { session, params } = ctx.oidc;
    const userId = session?.accountId;
    if (!userId) return;
    // The application that asked (the provider names it once it found it in the logout's state).
    const clientId = ctx.oidc.client?.clientId ?? null;
    await context.onSignedOut?.({ organizationId: context.organization.id, userId, clientId, allClients: Boolean(params?.logout), ip: ctx.ip ?? null });
  });
}

/** Logout tokens queued at sign-out and sent from the `backchannel-logout` job (backchannel-logout-job.ts); the sign-out audited. */
export const backchannelLogout: Feature = {
  name: "backchannel-logout",
  configuration: () => ({ features: { backchannelLogout: { enabled: true } } }),
  patches: [queueLogoutTokens, recordSignOut],
};
