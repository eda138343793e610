import { randomBytes, randomInt, timingSafeEqual } from "node:crypto";
import type { KeyValueStore } from "../cache/store";

/**
 * A magic link opened in another browser than the one that asked (decision 033). The asking
 * page shows a two-digit number; the other browser signs the asking one in only when the person
 * types that number there. Whoever made someone else's address ask for a link (to be signed in as
 * them when they click it) never shows them the number, so a click alone signs nobody in.
 * Three wrong numbers end the pairing; the link is then burnt by the caller.
 *
 * Attempts are counted by the store in one step (`increment`) before the number is compared, so
 * that numbers sent all at once are still only three comparisons: a read-then-write count would
 * let every guess of a burst see the same count.
 */
const MAX_ATTEMPTS = 3;
const pairingKey = (uid: string) => `magic-link:pairing:${uid}`;
const confirmedKey = (uid: string) => `magic-link:confirmed:${uid}`;
/** Set when three wrong numbers ended the pairing: numbers of the same burst that arrive after its end learn why. */
const exhaustedKey = (uid: string) => `magic-link:pairing-exhausted:${uid}`;
/** Per pairing (its own id), so that a new pairing of the same interaction counts afresh. */
const attemptsKey = (uid: string, pairingId: string) => `magic-link:pairing-attempts:${uid}:${pairingId}`;
/** Outlives any pairing (a link lives at most 1440 minutes, `auth.magicLinkTtlMinutes`). */
const ATTEMPTS_TTL_SECONDS = 24 * 60 * 60 + 60;

interface Pairing {
  code: string;
  id: string;
}

/**
 * The interaction's number: one per interaction, so a second request (another address, a resend)
 * shows the same page and the same number; its lifetime restarts with the new link's.
 */
export async function startPairing(store: KeyValueStore, uid: string, ttlSeconds: number): Promise<string> {
  const current = readPairing(await store.get(pairingKey(uid)));
  if (!current) await store.del(exhaustedKey(uid));
  const pairing = current ?? { code: String(randomInt(10, 100)), id: randomBytes(9).toString("base64url") };
  await store.set(pairingKey(uid), JSON.stringify(pairing), ttlSeconds);
  return pairing.code;
}

export async function pairingCode(store: KeyValueStore, uid: string): Promise<string | null> {
  return readPairing(await store.get(pairingKey(uid)))?.code ?? null;
}

export type PairingCheck = "match" | "wrong" | "exhausted" | "none";

/**
 * Compares a typed number; a match ends the pairing (one sign-in per number). The attempt is
 * counted first: past the third, nothing is compared any more.
 */
export async function checkPairing(store: KeyValueStore, uid: string, typed: string): Promise<PairingCheck> {
  const pairing = readPairing(await store.get(pairingKey(uid)));
  if (!pairing) return (await store.get(exhaustedKey(uid))) === null ? "none" : "exhausted";
  const attempt = await store.increment(attemptsKey(uid, pairing.id), ATTEMPTS_TTL_SECONDS);
  // The third attempt ended the pairing (or matched); later ones of the same burst only learn that.
  if (attempt > MAX_ATTEMPTS) return "exhausted";
  const given = Buffer.from(typed.trim().slice(0, 8));
  const expected = Buffer.from(pairing.code);
  if (given.length === expected.length && timingSafeEqual(given, expected)) {
    // take: of two tabs sending the right number, one signs in.
    return readPairing(await store.take(pairingKey(uid)))?.id === pairing.id ? "match" : "none";
  }
  if (attempt === MAX_ATTEMPTS) {
    // The mark first: a number of the same burst that finds the pairing gone then finds why.
    await store.set(exhaustedKey(uid), "1", ATTEMPTS_TTL_SECONDS);
    await store.del(pairingKey(uid));
    return "exhausted";
  }
  return "wrong";
}

/** The other browser confirmed: the asking one may finish the sign-in of this user. */
export async function markConfirmed(store: KeyValueStore, uid: string, userId: string, ttlSeconds: number): Promise<void> {
  await store.set(confirmedKey(uid), userId, ttlSeconds);
}

export async function isConfirmed(store: KeyValueStore, uid: string): Promise<boolean> {
  return (await store.get(confirmedKey(uid))) !== null;
}

/** The confirmed user, once: two tabs polling never both sign in. */
export function takeConfirmed(store: KeyValueStore, uid: string): Promise<string | null> {
  return store.take(confirmedKey(uid));
}

function readPairing(raw: string | null): Pairing | null {
  if (!raw) return null;
  try {
    const parsed = JSON.parse(raw) as Partial<Pairing>;
    // A pairing stored before pairings had ids (it lives minutes) counts under one shared id.
    return typeof parsed.code === "string" ? { code: parsed.code, id: typeof parsed.id === "string" ? parsed.id : "0" } : null;
  } catch {
    return null;
  }
}
