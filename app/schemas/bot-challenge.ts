import { z } from "zod";

/**
 * An organization's bot protection (decision 091): a proof-of-work challenge (ALTCHA) on the
 * sign-in forms, never, after failures from the address or for the account, or always.
 */
export const BOT_CHALLENGE_POLICIES = ["off", "suspicion", "always"] as const;
export type BotChallengePolicy = (typeof BOT_CHALLENGE_POLICIES)[number];

/**
 * The challenge's cost is its maxnumber: a browser computes up to that many SHA-256 hashes, half
 * on average. Below the minimum the proof costs a bot nothing; above the maximum an old phone
 * would spend minutes.
 */
export const BOT_CHALLENGE_COST = { min: 1_000, max: 1_000_000, default: 50_000 } as const;

export const BotChallengePolicySchema = z.enum(BOT_CHALLENGE_POLICIES);
export const BotChallengeCostSchema = z
  .number()
  .int("must be a whole number")
  .min(BOT_CHALLENGE_COST.min, `must be at least ${BOT_CHALLENGE_COST.min}`)
  .max(BOT_CHALLENGE_COST.max, `must be at most ${BOT_CHALLENGE_COST.max}`);

/**
 * The forms that carry a challenge: the label of the metric and the audit entry's `form`.
 * `device` is the device-code entry page (RFC 8628), which the provider renders.
 */
export const BOT_CHALLENGE_FORMS = ["password", "magic_link", "password_reset", "device"] as const;
export type BotChallengeForm = (typeof BOT_CHALLENGE_FORMS)[number];

/** Why a posted form's proof was refused; `unavailable` is the replay store not answering in time. */
export const BOT_CHALLENGE_FAILURES = ["missing", "invalid", "expired", "replayed", "unavailable"] as const;
export type BotChallengeFailure = (typeof BOT_CHALLENGE_FAILURES)[number];

/** The form field that carries the solution: ALTCHA's own name for it. */
export const BOT_CHALLENGE_FIELD = "altcha";

/** Where the provider's plain-HTML pages load their solver from (routes/[bot-challenge.js].ts). */
export const BOT_CHALLENGE_SCRIPT_PATH = "/bot-challenge.js";

/** What a page hands its solver script: ALTCHA's challenge JSON. */
export const BotChallengeSchema = z.object({
  algorithm: z.literal("SHA-256"),
  challenge: z.string(),
  maxnumber: z.number().int(),
  salt: z.string(),
  signature: z.string(),
});
export type BotChallenge = z.infer<typeof BotChallengeSchema>;
