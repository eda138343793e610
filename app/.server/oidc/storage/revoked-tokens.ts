import { randomBytes } from "node:crypto";
import type { KeyValueStore } from "../../cache/store";
import type { Database } from "../../db/client";

/**
 * Which client_credentials tokens were revoked (their JWT is their record, so a revocation is
 * the one thing kept: a marker in the ephemeral store until the token would have expired).
 *
 * Each process mirrors the markers in memory, so that introspecting a valid token sends no
 * statement (decision 061). A "revoked" from the mirror is always right; a "not revoked" is given
 * only while the mirror is provably complete, else the marker is read from the store as before:
 * - the mirror is loaded after this process listens for new markers, and again whenever the
 *   listening connection was lost ("*");
 * - a marker is written with its notification in one statement, so the message goes out at
 *   the marker's commit and never without it;
 * - PostgreSQL delivers notifications in commit order, so once a heartbeat this process sent
 *   itself comes back, every marker committed before it was sent has arrived. A "not revoked"
 *   is trusted while the last returned heartbeat was sent at most FRESH_MS ago: a listener that
 *   stalls or a database that goes away turns the mirror off within that time, not never.
 * On the embedded database there is one process and its notifications stay in it.
 */
export interface RevokedTokens {
  isRevoked(organizationId: string, tokenIdHash: string): Promise<boolean>;
  /** Keeps the marker until `expiresAtSeconds` (the token's own expiry). */
  revoke(organizationId: string, tokenIdHash: string, expiresAtSeconds: number): Promise<void>;
  close(): Promise<void>;
}

const CHANNEL = "porta_revoked_tokens";
/** How old the last returned heartbeat may be for a "not revoked" from memory. */
const FRESH_MS = 2_000;
/** Heartbeats go out at most this often, and only while tokens are being checked. */
const HEARTBEAT_MS = 500;
/** Beyond this many live markers the mirror steps aside and every check reads the store. */
export const MAX_MIRRORED = 100_000;
/** Entries are kept this long past their expiry, for the database's clock and ours to differ. */
const CLOCK_SLACK_MS = 60_000;
const PRUNE_MS = 60_000;
const RETRY_MS = 1_000;

const markerKey = (organizationId: string, tokenIdHash: string) => `oidc:${organizationId}:ClientCredentials:revoked:${tokenIdHash}`;
const MARKER_PATTERN = "oidc:%:ClientCredentials:revoked:%";

interface Options {
  /** The wall clock (epoch ms), which tokens' and markers' expiries are on. */
  now?: () => number;
  /** A clock that never steps back (ms), for the heartbeats: a wall clock set back must not stretch their bound. */
  elapsed?: () => number;
  maxMirrored?: number;
}

export function createRevokedTokens(
  db: Pick<Database, "notify" | "listen">,
  store: Pick<KeyValueStore, "get" | "set" | "liveKeysLike">,
  options: Options = {},
): RevokedTokens {
  const now = options.now ?? Date.now;
  const elapsed = options.elapsed ?? (() => performance.now());
  const maxMirrored = options.maxMirrored ?? MAX_MIRRORED;
  const self = randomBytes(9).toString("base64url");
  /** Marker key → when it may be forgotten (epoch ms). */
  const mirror = new Map<string, number>();
  /** Heartbeats awaited by a load, by the time they were sent. */
  const awaited = new Map<number, () => void>();
  let complete = false;
  let generation = 0;
  let confirmedSentAt = -Infinity;
  let lastHeartbeatAt = -Infinity;
  let lastPruneAt = elapsed();
  let retryAt = -Infinity;
  let starting: Promise<void> | undefined;
  let unlisten: (() => Promise<void>) | undefined;
  let closed = false;

  const remember = (key: string, expiresAt: number | null) => {
    mirror.set(key, expiresAt === null ? Infinity : expiresAt + CLOCK_SLACK_MS);
    if (mirror.size > maxMirrored) complete = false;
  };

  function onMessage(message: string) {
    if (message === "*") {
      // The listening connection was lost and found again: markers may have been missed.
      complete = false;
      generation += 1;
      return;
    }
    if (message.startsWith("hb:")) {
      const [, from, sentAtText] = message.split(":");
      const sentAt = Number(sentAtText);
      if (from !== self) return;
      if (sentAt > confirmedSentAt) confirmedSentAt = sentAt;
      awaited.get(sentAt)?.();
      return;
    }
    const space = message.indexOf(" ");
    if (space > 0) remember(message.slice(space + 1), Number(message.slice(0, space)) || null);
  }

  function sendHeartbeat(at: number): Promise<void> {
    lastHeartbeatAt = at;
    return db.notify(CHANNEL, `hb:${self}:${at}`);
  }

  /** Resolves once a heartbeat sent now has come back: the listener hears what commits from now on. */
  async function listening(): Promise<void> {
    let at = elapsed();
    while (awaited.has(at)) at += 0.001;
    let timer: NodeJS.Timeout | undefined;
    const back = new Promise<void>((resolve, reject) => {
      awaited.set(at, resolve);
      timer = setTimeout(() => reject(new Error("the revocation listener did not answer")), FRESH_MS);
    });
    try {
      await sendHeartbeat(at);
      await back;
    } finally {
      clearTimeout(timer);
      awaited.delete(at);
    }
  }

  async function load() {
    const seen = generation;
    unlisten ??= await db.listen(CHANNEL, onMessage);
    await listening();
    // What commits from here on arrives as a message; what committed before is in this snapshot.
    mirror.clear();
    const live = await store.liveKeysLike(MARKER_PATTERN, maxMirrored + 1);
    for (const { key, expiresAt } of live) remember(key, expiresAt);
    if (live.length > maxMirrored) retryAt = elapsed() + PRUNE_MS;
    complete = live.length <= maxMirrored && mirror.size <= maxMirrored && seen === generation && !closed;
  }

  /** Loads the mirror, once at a time, and not again within RETRY_MS of a failure. */
  function warmUp() {
    if (closed || complete || starting || elapsed() < retryAt) return;
    starting = load()
      .catch(() => {
        retryAt = Math.max(retryAt, elapsed() + RETRY_MS);
      })
      .finally(() => {
        starting = undefined;
      });
  }

  /** While tokens are checked, proves every HEARTBEAT_MS that the listener still hears, and forgets expired markers. */
  function keepFresh() {
    const at = elapsed();
    if (at - lastHeartbeatAt < HEARTBEAT_MS) return;
    sendHeartbeat(at).catch(() => undefined);
    if (at - lastPruneAt < PRUNE_MS) return;
    lastPruneAt = at;
    const wall = now();
    for (const [key, forgetAt] of mirror) if (forgetAt <= wall) mirror.delete(key);
  }

  return {
    async isRevoked(organizationId, tokenIdHash) {
      const key = markerKey(organizationId, tokenIdHash);
      const forgetAt = mirror.get(key);
      if (forgetAt !== undefined && forgetAt > now()) return true;
      warmUp();
      if (complete) {
        keepFresh();
        if (elapsed() - confirmedSentAt <= FRESH_MS) return false;
      }
      return (await store.get(key)) !== null;
    },
    async revoke(organizationId, tokenIdHash, expiresAtSeconds) {
      const ttl = expiresAtSeconds - Math.floor(now() / 1000);
      if (ttl <= 0) return;
      const key = markerKey(organizationId, tokenIdHash);
      await store.set(key, "1", ttl, CHANNEL);
      // This process knows at once; the others when the notification arrives.
      remember(key, expiresAtSeconds * 1000);
    },
    async close() {
      closed = true;
      complete = false;
      await starting;
      await unlisten?.();
    },
  };
}
