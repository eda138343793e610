import { randomBytes } from "node:crypto";
import { solveChallenge } from "altcha-lib/v1";
import { describe, expect, it } from "vitest";
import type { BotChallenge } from "~/schemas/bot-challenge";
import { CHALLENGE_LIFETIME_SECONDS, createBotChallenges, MAX_PAYLOAD_LENGTH } from "./challenges";

const ORG = { id: "0190a3b4-0000-7000-8000-000000000001", botChallengeCost: 2_000 };

function memoryCounter() {
  const counts = new Map<string, number>();
  return {
    counts,
    async increment(key: string) {
      const next = (counts.get(key) ?? 0) + 1;
      counts.set(key, next);
      return next;
    },
  };
}

async function solve(challenge: BotChallenge, overrides: Record<string, unknown> = {}) {
  const solution = await solveChallenge(challenge.challenge, challenge.salt, challenge.algorithm, challenge.maxnumber).promise;
  if (!solution) throw new Error("no solution");
  const payload = { algorithm: challenge.algorithm, challenge: challenge.challenge, number: solution.number, salt: challenge.salt, signature: challenge.signature, took: solution.took, ...overrides };
  return Buffer.from(JSON.stringify(payload)).toString("base64");
}

function setup(options: { now?: () => number; store?: { increment(key: string, ttl: number): Promise<number> }; timeoutMs?: number } = {}) {
  const store = options.store ?? memoryCounter();
  const counted: string[] = [];
  const challenges = createBotChallenges({
    encryptionKey: randomBytes(32),
    store,
    count: (form, result) => counted.push(`${form}:${result}`),
    ...(options.now ? { now: options.now } : {}),
    ...(options.timeoutMs !== undefined ? { replayStoreTimeoutMs: options.timeoutMs } : {}),
  });
  return { challenges, counted, store };
}

describe("proof-of-work challenges", () => {
  it("passes a solved challenge once, and refuses the same solution the second time", async () => {
    const { challenges, counted } = setup();
    const challenge = await challenges.issue(ORG, "password");
    expect(challenge.maxnumber).toBe(2_000);
    const payload = await solve(challenge);
    expect(await challenges.verify(ORG.id, "password", payload)).toEqual({ ok: true });
    expect(await challenges.verify(ORG.id, "password", payload)).toEqual({ ok: false, reason: "replayed" });
    expect(counted).toEqual(["password:issued", "password:passed", "password:replayed"]);
  });

  it("refuses a missing solution as missing", async () => {
    const { challenges } = setup();
    for (const posted of [null, undefined, "", 42]) expect(await challenges.verify(ORG.id, "password", posted)).toEqual({ ok: false, reason: "missing" });
  });

  it("refuses a solution made for another organization", async () => {
    const { challenges } = setup();
    const payload = await solve(await challenges.issue(ORG, "magic_link"));
    expect(await challenges.verify("0190a3b4-0000-7000-8000-000000000002", "magic_link", payload)).toEqual({ ok: false, reason: "invalid" });
  });

  it("refuses a solution issued under another deployment's key", async () => {
    const other = setup().challenges;
    const payload = await solve(await other.issue(ORG, "password"));
    expect(await setup().challenges.verify(ORG.id, "password", payload)).toEqual({ ok: false, reason: "invalid" });
  });

  it("refuses an expired challenge as expired, and a forged expiry as invalid", async () => {
    let clock = Date.now();
    const { challenges } = setup({ now: () => clock });
    const challenge = await challenges.issue(ORG, "password");
    const payload = await solve(challenge);
    clock += (CHALLENGE_LIFETIME_SECONDS + 1) * 1000;
    expect(await challenges.verify(ORG.id, "password", payload)).toEqual({ ok: false, reason: "expired" });
    // Moving the expiry into the future changes the salt, which the HMAC covers.
    const later = challenge.salt.replace(/expires=\d+/, `expires=${Math.floor(clock / 1000) + 600}`);
    expect(await challenges.verify(ORG.id, "password", await solve(challenge, { salt: later }))).toEqual({ ok: false, reason: "invalid" });
  });

  it("refuses tampered solutions: a wrong number, another challenge, a changed signature", async () => {
    const { challenges } = setup();
    const challenge = await challenges.issue(ORG, "password");
    const right = JSON.parse(Buffer.from(await solve(challenge), "base64").toString()) as { number: number };
    const tampered = [
      { number: (right.number + 1) % 2_000 },
      { challenge: "0".repeat(64) },
      { signature: "f".repeat(64) },
      { algorithm: "SHA-1" },
      { number: -1 },
      { number: 1.5 },
      { number: "7" },
      { salt: `${challenge.salt}x&` },
    ];
    for (const overrides of tampered) expect(await challenges.verify(ORG.id, "password", await solve(challenge, overrides)), JSON.stringify(overrides)).toEqual({ ok: false, reason: "invalid" });
  });

  it("refuses malformed, huge, NUL-bearing and broken base64 payloads without throwing", async () => {
    const { challenges, store } = setup();
    const b64 = (text: string) => Buffer.from(text).toString("base64");
    const hostile = [
      "not base64!",
      "YWJj=", // bad padding
      "====",
      b64("not json"),
      b64("null"),
      b64("[]"),
      b64('{"salt":42}'),
      b64('{"algorithm":"SHA-256","challenge":"\u0000","number":1,"salt":"a","signature":"b"}'),
      `${b64("{}")}\u0000`,
      "A".repeat(MAX_PAYLOAD_LENGTH + 4),
      b64(JSON.stringify({ algorithm: "SHA-256", challenge: "a".repeat(64), number: 1, salt: "x".repeat(100_000), signature: "b".repeat(64) })),
      b64(`${"[".repeat(10_000)}${"]".repeat(10_000)}`),
    ];
    for (const posted of hostile) expect(await challenges.verify(ORG.id, "password", posted)).toEqual({ ok: false, reason: "invalid" });
    // Nothing hostile reached the replay store.
    expect((store as ReturnType<typeof memoryCounter>).counts.size).toBe(0);
  });

  it("refuses (fails closed) when the replay store is down, and passes the same solution once it is back", async () => {
    let down = true;
    const counter = memoryCounter();
    const { challenges, counted } = setup({
      store: {
        increment: async (key) => {
          if (down) throw new Error("connect ECONNREFUSED");
          return counter.increment(key);
        },
      },
    });
    const payload = await solve(await challenges.issue(ORG, "password_reset"));
    expect(await challenges.verify(ORG.id, "password_reset", payload)).toEqual({ ok: false, reason: "unavailable" });
    down = false;
    expect(await challenges.verify(ORG.id, "password_reset", payload)).toEqual({ ok: true });
    expect(counted).toContain("password_reset:unavailable");
  });

  it("refuses within its time bound when the replay store is slow", async () => {
    const { challenges } = setup({ store: { increment: () => new Promise<number>(() => undefined) }, timeoutMs: 100 });
    const payload = await solve(await challenges.issue(ORG, "password"));
    const started = Date.now();
    expect(await challenges.verify(ORG.id, "password", payload)).toEqual({ ok: false, reason: "unavailable" });
    expect(Date.now() - started).toBeLessThan(1_000);
  });

  it("keeps the cost within its bounds", async () => {
    const { challenges } = setup();
    expect((await challenges.issue({ ...ORG, botChallengeCost: 5 }, "password")).maxnumber).toBe(1_000);
    expect((await challenges.issue({ ...ORG, botChallengeCost: 1e9 }, "password")).maxnumber).toBe(1_000_000);
  });
});
