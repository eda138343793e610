import { hkdfSync, timingSafeEqual } from "node:crypto";
import { createChallenge } from "altcha-lib/v1";
import { z } from "zod";
import { BOT_CHALLENGE_COST, type BotChallenge, type BotChallengeFailure, type BotChallengeForm } from "~/schemas/bot-challenge";
import type { KeyValueStore } from "../cache/store";

/**
 * Proof-of-work challenges (ALTCHA, decision 091), the one module on altcha-lib. A challenge is
 * stateless: ALTCHA's HMAC over it, under a key derived from ENCRYPTION_KEY per organization, is
 * the record, so any process verifies what another issued. Its salt carries its expiry, covered
 * by the HMAC. It is not bound to one form: the login page's one form posts to the password and
 * the magic-link endpoints alike. What makes it single-use is the ephemeral store:
 * the first verification of a signature counts it there in one statement (`increment`), and any
 * later one, in any process, sees a count above one.
 */
export interface BotChallenges {
  /** A fresh challenge for the organization's form, at the organization's cost. */
  issue(organization: { id: string; botChallengeCost: number }, form: BotChallengeForm): Promise<BotChallenge>;
  /** Checks a posted solution (the form field as it came) and uses it up; `form` names the post in the metric. */
  verify(organizationId: string, form: BotChallengeForm, posted: unknown): Promise<BotChallengeVerdict>;
}

export type BotChallengeVerdict = { ok: true } | { ok: false; reason: BotChallengeFailure };

/** How long a page's challenge can be solved and posted: enough to type a password, short enough to be useless stockpiled. */
export const CHALLENGE_LIFETIME_SECONDS = 10 * 60;

/** How long a verification waits for the replay store before it refuses (fail closed). */
const REPLAY_STORE_TIMEOUT_MS = 2_000;

/** A solution is ALTCHA's base64 JSON of a few short fields; anything longer is not one. */
export const MAX_PAYLOAD_LENGTH = 2_048;

const HEX64 = /^[0-9a-f]{64}$/;
const BASE64 = /^[A-Za-z0-9+/]+={0,2}$/;

/**
 * The payload as ALTCHA defines it (`took` and other extra fields are ignored). The salt is ours:
 * 12 random bytes in hex, then the parameters, then ALTCHA's closing `&`.
 */
const PayloadSchema = z.object({
  algorithm: z.literal("SHA-256"),
  challenge: z.string().regex(HEX64),
  number: z.number().int().min(0).max(BOT_CHALLENGE_COST.max),
  salt: z.string().max(256).regex(/^[0-9a-f]{24}\?[A-Za-z0-9_=&%.-]+&$/),
  signature: z.string().regex(HEX64),
});

export interface BotChallengeOptions {
  encryptionKey: Buffer;
  store: Pick<KeyValueStore, "increment">;
  /** Counts each verdict (metrics.ts); the label values are the form and the result. */
  count?: (form: BotChallengeForm, result: "issued" | "passed" | BotChallengeFailure) => void;
  replayStoreTimeoutMs?: number;
  now?: () => number;
}

export function createBotChallenges(options: BotChallengeOptions): BotChallenges {
  const now = options.now ?? Date.now;
  const count = options.count ?? (() => undefined);
  const timeoutMs = options.replayStoreTimeoutMs ?? REPLAY_STORE_TIMEOUT_MS;
  // One key per organization: a solution made for one organization's page never passes at another's.
  const keyOf = (organizationId: string) => Buffer.from(hkdfSync("sha256", options.encryptionKey, organizationId, "porta bot challenge", 32)).toString("hex");

  async function useOnce(signature: string, expiresAt: number): Promise<"first" | "again" | "unavailable"> {
    const ttl = Math.max(1, Math.ceil((expiresAt - now()) / 1000) + 60);
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<"unavailable">((resolve) => {
      timer = setTimeout(() => resolve("unavailable"), timeoutMs);
    });
    try {
      const counted = options.store.increment(`bot-challenge:${signature}`, ttl).then((n) => (n === 1 ? ("first" as const) : ("again" as const)));
      return await Promise.race([counted, late]);
    } catch {
      return "unavailable";
    } finally {
      clearTimeout(timer);
    }
  }

  async function check(organizationId: string, posted: unknown): Promise<BotChallengeVerdict> {
    if (typeof posted !== "string" || posted === "") return { ok: false, reason: "missing" };
    if (posted.length > MAX_PAYLOAD_LENGTH || posted.length % 4 !== 0 || !BASE64.test(posted)) return { ok: false, reason: "invalid" };
    let json: unknown;
    try {
      json = JSON.parse(Buffer.from(posted, "base64").toString("utf8"));
    } catch {
      return { ok: false, reason: "invalid" };
    }
    const payload = PayloadSchema.safeParse(json);
    if (!payload.success) return { ok: false, reason: "invalid" };
    const params = new URLSearchParams(payload.data.salt.slice(payload.data.salt.indexOf("?") + 1));
    const expires = Number(params.get("expires"));
    if (!params.has("expires") || !Number.isSafeInteger(expires)) return { ok: false, reason: "invalid" };
    // The signature first (expiry not yet): a forged expiry must read as forged, not as expired.
    // ALTCHA's own check (verifySolution) compares the HMAC with `===`: the same recomputation,
    // compared in constant time (both sides are 64 hex digits, as the schema holds).
    const expected = await createChallenge({ algorithm: "SHA-256", hmacKey: keyOf(organizationId), number: payload.data.number, salt: payload.data.salt });
    const same = (a: string, b: string) => timingSafeEqual(Buffer.from(a, "utf8"), Buffer.from(b, "utf8"));
    if (expected.challenge.length !== 64 || !same(expected.challenge, payload.data.challenge) || !same(expected.signature, payload.data.signature)) {
      return { ok: false, reason: "invalid" };
    }
    if (expires * 1000 <= now()) return { ok: false, reason: "expired" };
    const use = await useOnce(payload.data.signature, expires * 1000);
    if (use === "again") return { ok: false, reason: "replayed" };
    if (use === "unavailable") return { ok: false, reason: "unavailable" };
    return { ok: true };
  }

  return {
    async issue(organization, form) {
      const maxnumber = Math.min(BOT_CHALLENGE_COST.max, Math.max(BOT_CHALLENGE_COST.min, organization.botChallengeCost));
      const challenge = await createChallenge({
        algorithm: "SHA-256",
        hmacKey: keyOf(organization.id),
        maxnumber,
        expires: new Date(now() + CHALLENGE_LIFETIME_SECONDS * 1000),
      });
      count(form, "issued");
      return { algorithm: "SHA-256", challenge: challenge.challenge, maxnumber, salt: challenge.salt, signature: challenge.signature };
    },
    async verify(organizationId, form, posted) {
      const verdict = await check(organizationId, posted);
      count(form, verdict.ok ? "passed" : verdict.reason);
      return verdict;
    },
  };
}
