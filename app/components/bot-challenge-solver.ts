import type { BotChallenge } from "~/schemas/bot-challenge";

/**
 * The proof-of-work search of an organization's challenge (decision 091), shared by the React
 * forms (bot-challenge.tsx) and the device-code entry page, which the provider renders as plain
 * HTML and which loads this same function as a static script (bot-challenge-page.ts). It must
 * stay self-contained (no reference to anything outside its body): the page's script is built
 * from its source text. Tries 0..maxnumber with WebCrypto's SHA-256 until `salt + n` hashes to
 * the challenge, yielding to the page every few hundred tries; null when cancelled or not found.
 */
export async function solveBotChallenge(challenge: BotChallenge, cancelled: () => boolean): Promise<number | null> {
  const yieldEvery = 400;
  const encoder = new TextEncoder();
  const hex = (buffer: ArrayBuffer) => Array.from(new Uint8Array(buffer), (byte) => byte.toString(16).padStart(2, "0")).join("");
  for (let n = 0; n <= challenge.maxnumber; n++) {
    if (cancelled()) return null;
    if (hex(await crypto.subtle.digest("SHA-256", encoder.encode(`${challenge.salt}${n}`))) === challenge.challenge) return n;
    if (n % yieldEvery === yieldEvery - 1) await new Promise((resolve) => setTimeout(resolve, 0));
  }
  return null;
}

/** ALTCHA's payload for a found number: base64 JSON, what the hidden field carries. */
export function botChallengePayload(challenge: BotChallenge, number: number, took: number): string {
  return btoa(JSON.stringify({ algorithm: challenge.algorithm, challenge: challenge.challenge, number, salt: challenge.salt, signature: challenge.signature, took }));
}
