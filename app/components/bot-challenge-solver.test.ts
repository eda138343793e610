import { createChallenge, verifySolution } from "altcha-lib/v1";
import { describe, expect, it } from "vitest";
import { PAGE_SOLVER_SCRIPT } from "./bot-challenge-page";
import { botChallengePayload, solveBotChallenge } from "./bot-challenge-solver";

/** The search the forms and the provider's pages share, against altcha-lib's own challenge and check. */
const KEY = "a test key";

async function aChallenge() {
  const challenge = await createChallenge({ algorithm: "SHA-256", hmacKey: KEY, maxnumber: 2_000, number: 1_234 });
  return { algorithm: "SHA-256" as const, challenge: challenge.challenge, maxnumber: 2_000, salt: challenge.salt, signature: challenge.signature };
}

describe("the proof-of-work search", () => {
  it("finds the number, and its payload passes altcha-lib's verification", async () => {
    const challenge = await aChallenge();
    const number = await solveBotChallenge(challenge, () => false);
    expect(number).toBe(1_234);
    expect(await verifySolution(botChallengePayload(challenge, number!, 5), KEY)).toBe(true);
  });

  it("stops when cancelled", async () => {
    expect(await solveBotChallenge(await aChallenge(), () => true)).toBeNull();
  });

  it("works from its source text, as the provider pages' script carries it", async () => {
    const challenge = await aChallenge();
    // The script's functions stand alone: evaluated from their text they still find the number.
    const fromText = new Function(`return (${solveBotChallenge.toString()});`)() as typeof solveBotChallenge;
    expect(await fromText(challenge, () => false)).toBe(1_234);
    expect(() => new Function(PAGE_SOLVER_SCRIPT)).not.toThrow();
    expect(PAGE_SOLVER_SCRIPT).toContain('"altcha"');
  });
});
