import { describe, expect, it } from "vitest";
import { fakeSignInContext } from "../../../test/support/sign-in-context";
import type { BotChallenge, BotChallengeFailure, BotChallengePolicy } from "~/schemas/bot-challenge";
import type { LimitName } from "../rate-limit/limiters";
import { challengeForForm, challengeRefusalStatus, checkBotChallenge, createCodeEntryChallenges, SUSPICION_FAILURES } from "./bot-challenge";
import type { SignInContext } from "./method";

/**
 * What the organization's policy asks of a form, without a server: the counters the suspicion
 * reads, whether a challenge is issued, and what a refused post records.
 */
const CHALLENGE: BotChallenge = { algorithm: "SHA-256", challenge: "c".repeat(64), maxnumber: 1_000, salt: `${"a".repeat(24)}?expires=1&`, signature: "s".repeat(64) };
const meta = { ip: "203.0.113.9", requestId: "req-1" };
const orgWith = (botChallenge: BotChallengePolicy) => ({ id: "org-1", botChallenge, botChallengeCost: 1_000 });

function setup(options: { highest?: number; verdict?: { ok: true } | { ok: false; reason: BotChallengeFailure } } = {}) {
  const read: Array<Array<[LimitName, string]>> = [];
  const issued: string[] = [];
  const verified: unknown[] = [];
  const { ctx, recorded } = fakeSignInContext({
    limits: { highestCount: async (checks: Array<[LimitName, string]>) => (read.push(checks), options.highest ?? 0) },
    botChallenges: {
      issue: async (_org: unknown, form: string) => (issued.push(form), CHALLENGE),
      verify: async (_id: string, _form: string, posted: unknown) => (verified.push(posted), options.verdict ?? { ok: true }),
    },
  });
  return { ctx: ctx as unknown as SignInContext<"limits" | "botChallenges">, recorded, read, issued, verified };
}

const posted = (altcha?: string) => {
  const form = new FormData();
  if (altcha !== undefined) form.set("altcha", altcha);
  return form;
};

describe("which forms carry a challenge", () => {
  it("never with the policy off, without reading a counter", async () => {
    const { ctx, read, issued } = setup({ highest: 99 });
    expect(await challengeForForm(ctx, orgWith("off"), "password", { ip: meta.ip })).toBeNull();
    expect(await checkBotChallenge(ctx, orgWith("off"), "password", { posted: posted(), meta, email: "a@example.test" })).toEqual({ ok: true });
    expect(read).toEqual([]);
    expect(issued).toEqual([]);
  });

  it("always with the policy always, without reading a counter", async () => {
    const { ctx, read, issued } = setup();
    expect(await challengeForForm(ctx, orgWith("always"), "magic_link", { ip: meta.ip })).toEqual(CHALLENGE);
    expect(issued).toEqual(["magic_link"]);
    expect(read).toEqual([]);
  });

  it(`after suspicion: from ${SUSPICION_FAILURES} wrong passwords of the address or the named account`, async () => {
    const below = setup({ highest: SUSPICION_FAILURES - 1 });
    expect(await challengeForForm(below.ctx, orgWith("suspicion"), "password", { ip: meta.ip })).toBeNull();
    expect(below.read).toEqual([[["passwordLoginIp", meta.ip]]]);

    const at = setup({ highest: SUSPICION_FAILURES });
    expect(await challengeForForm(at.ctx, orgWith("suspicion"), "password", { ip: meta.ip, email: "Ada@Example.test" })).toEqual(CHALLENGE);
    // The account's key is the password limit's own: organization and normalized email.
    expect(at.read).toEqual([
      [
        ["passwordLoginIp", meta.ip],
        ["passwordLogin", "org-1:ada@example.test"],
      ],
    ]);
  });
});

describe("a posted form", () => {
  it("passes a verified solution without an audit entry", async () => {
    const { ctx, recorded, verified } = setup({ verdict: { ok: true } });
    expect(await checkBotChallenge(ctx, orgWith("always"), "password", { posted: posted("payload"), meta })).toEqual({ ok: true });
    expect(verified).toEqual(["payload"]);
    expect(recorded.audits()).toEqual([]);
  });

  it("refuses with the reason, audits it as the visitor (reason only), and hands back a fresh challenge", async () => {
    const { ctx, recorded, verified } = setup({ verdict: { ok: false, reason: "missing" } });
    expect(await checkBotChallenge(ctx, orgWith("always"), "password_reset", { posted: posted(), meta })).toEqual({ ok: false, reason: "missing", challenge: CHALLENGE });
    expect(verified).toEqual([null]);
    expect(recorded.audits()).toEqual([{ eventType: "auth.challenge_failed", organizationId: "org-1", data: { form: "password_reset", reason: "missing" } }]);
    expect(recorded.transactions[0]!.actor).toMatchObject({ type: "anonymous", ip: meta.ip, requestId: meta.requestId });
  });

  it("answers 503 only when the replay store did not answer", () => {
    expect(challengeRefusalStatus("unavailable")).toBe(503);
    for (const reason of ["missing", "invalid", "expired", "replayed"] as const) expect(challengeRefusalStatus(reason)).toBe(403);
  });
});

describe("the device-code entry page", () => {
  const codeEntry = (options: Parameters<typeof setup>[0] = {}) => {
    const made = setup(options);
    return { ...made, challenges: createCodeEntryChallenges(() => made.ctx) };
  };

  it("asks nothing and reads nothing with the policy off", async () => {
    const { challenges, read } = codeEntry({ highest: 99 });
    expect(await challenges.required(orgWith("off"), meta.ip)).toBe(false);
    expect(read).toEqual([]);
  });

  it(`after suspicion: ${SUSPICION_FAILURES} wrong passwords or code entries from the address at this organization`, async () => {
    const below = codeEntry({ highest: SUSPICION_FAILURES - 1 });
    expect(await below.challenges.required(orgWith("suspicion"), meta.ip)).toBe(false);
    expect(below.read).toEqual([
      [
        ["passwordLoginIp", meta.ip],
        ["deviceCodeEntryIp", `org-1:${meta.ip}`],
      ],
    ]);
    expect(await codeEntry({ highest: SUSPICION_FAILURES }).challenges.required(orgWith("suspicion"), meta.ip)).toBe(true);
    expect(await codeEntry().challenges.required(orgWith("always"), null)).toBe(true);
  });

  it("issues and verifies as the device form, and audits a refusal with the reason only", async () => {
    const { challenges, issued, verified, recorded } = codeEntry({ verdict: { ok: false, reason: "expired" } });
    expect(await challenges.issue(orgWith("always"))).toEqual(CHALLENGE);
    expect(issued).toEqual(["device"]);
    expect(await challenges.check(orgWith("always"), "payload", meta)).toEqual({ ok: false, reason: "expired" });
    expect(verified).toEqual(["payload"]);
    expect(recorded.audits()).toEqual([{ eventType: "auth.challenge_failed", organizationId: "org-1", data: { form: "device", reason: "expired" } }]);
    expect(recorded.transactions[0]!.actor).toMatchObject({ type: "anonymous", ip: meta.ip, requestId: meta.requestId });
  });
});
