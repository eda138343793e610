import { describe, expect, it } from "vitest";
import { fakeLimits, fakeSignInContext } from "../../../../test/support/sign-in-context";
import { Prisma } from "~/generated/prisma/client";
import { parseImportedHash } from "../../auth/legacy-hashes";
import { attemptPasswordLogin, password, type PasswordLoginInput } from "./password";

/**
 * What a password attempt decides, without a server: the account row is what a test says, the
 * hasher compares strings. A right password proves the sign-in (with the lockout reset and a
 * rehash in the same UPDATE), or only records itself when a second factor follows; a wrong one
 * writes the failure. The flow records the proof (finish.ts), not the method.
 */
const account = { id: "user-1", email: "ada@example.test", status: "active", passwordHash: "hash:right", legacyPassword: null as unknown, lockedUntil: null as Date | null, failedLoginCount: 2, emailOtpEnabled: false, totpEnrolled: false, recoveryLeft: false, passkey: false };

function attempt(input: Partial<PasswordLoginInput>, options: { found?: typeof account | null; refuse?: Parameters<typeof fakeLimits>[1]; stale?: boolean } = {}) {
  const executed: unknown[] = [];
  const verified: Array<[string, string]> = [];
  const { ctx, recorded: own } = fakeSignInContext({
    db: {
      $queryRaw: async () => (options.found === null ? [] : [options.found ?? account]),
      $executeRaw: async (...args: unknown[]) => (executed.push(args), 1),
      user: { update: async (args: unknown) => (executed.push(args), {}) },
    },
    passwords: {
      verify: async (hash: string, given: string) => (verified.push([hash, given]), hash === `hash:${given}`),
      dummyHash: async () => "hash:dummy-never-matches\u0000",
      needsRehash: () => options.stale ?? false,
      hash: async (given: string) => `newhash:${given}`,
    },
    tokens: { derive: () => "signature" },
  });
  const limits = fakeLimits(own, options.refuse);
  const result = attemptPasswordLogin({ ...ctx, limits } as never, {
    organizationId: "org-1",
    clientId: "client-1",
    email: "Ada@Example.test",
    password: "right",
    ip: "203.0.113.9",
    requestId: null,
    ...input,
  });
  return { result, recorded: own, executed, verified };
}

describe("the password first factor", () => {
  it("is the login method password", () => {
    expect(password).toMatchObject({ kind: "first", method: "password" });
  });

  it("a right password proves the sign-in as the user, resetting the lockout with it, and gives its limit points back", async () => {
    const { result, recorded } = attempt({});
    expect(await result).toEqual({ outcome: "success", userId: "user-1", email: "ada@example.test", redirectTo: "https://app.test/resume" });
    expect(recorded.transactions).toHaveLength(1);
    expect(recorded.transactions[0]).toMatchObject({ actor: { type: "user", id: "user-1" }, proof: { userId: "user-1", changes: { failedLoginCount: 0, lockedUntil: null } } });
    expect(recorded.consumed.map(([name]) => name)).toEqual(["passwordLoginIp", "passwordLogin"]);
    expect(recorded.refunded).toEqual(recorded.consumed);
  });

  it("a stale hash is replaced in the same proof", async () => {
    const { result, recorded } = attempt({}, { stale: true, found: { ...account, failedLoginCount: 0 } });
    await result;
    expect(recorded.transactions[0]?.proof).toEqual({ userId: "user-1", changes: { passwordHash: "newhash:right" } });
  });

  it("when a second factor follows, nothing is proved yet: the right password is recorded as verified", async () => {
    const { result, recorded } = attempt({ secondFactorFollows: () => true });
    expect(await result).toMatchObject({ outcome: "success", userId: "user-1", redirectTo: null });
    expect(recorded.transactions[0]?.proof).toBeNull();
    expect(recorded.transactions[0]?.audits.map((a) => a.eventType)).toEqual(["auth.password.verified"]);
  });

  it("a wrong password, an unknown account and a refused limit are one failure from outside, each audited with its reason", async () => {
    const wrong = attempt({ password: "wrong" });
    expect(await wrong.result).toEqual({ outcome: "failure", reason: "wrong_password" });
    expect(wrong.recorded.transactions[0]).toMatchObject({ actor: { type: "anonymous" }, proof: null });
    expect(wrong.recorded.transactions[0]?.audits[0]).toMatchObject({ eventType: "auth.login.failure", targetId: "user-1", data: { reason: "wrong_password", email: "ada@example.test" } });
    expect(wrong.recorded.refunded).toEqual([]);

    const unknown = attempt({}, { found: null });
    expect(await unknown.result).toEqual({ outcome: "failure", reason: "unknown_user" });

    const limited = attempt({}, { refuse: { passwordLoginIp: 60 } });
    expect(await limited.result).toEqual({ outcome: "rate_limited", retryAfterSeconds: 60 });
    expect(limited.recorded.transactions[0]?.audits[0]).toMatchObject({ data: { reason: "rate_limited" } });
  });

  it("a locked account fails even with the right password", async () => {
    const { result } = attempt({}, { found: { ...account, lockedUntil: new Date(Date.now() + 60_000) } });
    expect(await result).toEqual({ outcome: "failure", reason: "locked" });
  });

  describe("an imported account (decision 085)", () => {
    // glibc's crypt(3) of "right" would do as well; this is SHA-512-crypt of "correct horse".
    const imported = parseImportedHash("$6$abcdefgh$yIZAF3gQPvtKZO/9qOJKffAKKbtS3ef3qmwyugk4uWVjX8YZf/GV3A8SkFxEPY0T56CcilGrHKLffBsp6dLMG.", { allowWeak: false });
    const legacyAccount = { ...account, failedLoginCount: 0, passwordHash: `hash:${imported.secret}`, legacyPassword: JSON.parse(JSON.stringify(imported.legacy)) as unknown };

    it("the old password signs in with one verification, of what the old algorithm derives, and the proof replaces the hash and forgets the algorithm", async () => {
      const { result, recorded, verified } = attempt({ password: "correct horse" }, { found: legacyAccount });
      expect(await result).toMatchObject({ outcome: "success", userId: "user-1" });
      expect(verified).toEqual([[legacyAccount.passwordHash, imported.secret]]);
      expect(recorded.transactions[0]?.proof).toEqual({ userId: "user-1", changes: { passwordHash: "newhash:correct horse", legacyPassword: Prisma.DbNull } });
    });

    it("when a second factor follows, the replacement is written with the verified entry", async () => {
      const { result, executed, verified } = attempt({ password: "correct horse", secondFactorFollows: () => true }, { found: legacyAccount });
      expect(await result).toMatchObject({ outcome: "success", redirectTo: null });
      expect(verified).toHaveLength(1);
      expect(executed).toEqual([{ where: { id: "user-1" }, data: { passwordHash: "newhash:correct horse", legacyPassword: Prisma.DbNull } }]);
    });

    it("a wrong password fails after one verification and changes nothing but the failure count", async () => {
      const { result, recorded, verified, executed } = attempt({ password: "correct horse!" }, { found: legacyAccount });
      expect(await result).toEqual({ outcome: "failure", reason: "wrong_password" });
      expect(verified).toHaveLength(1);
      expect(recorded.transactions[0]?.proof).toBeNull();
      expect(executed).toHaveLength(1);
      expect(JSON.stringify(executed)).not.toContain("legacyPassword");
    });

    it("the typed password itself never matches the wrapped hash", async () => {
      const { result } = attempt({ password: imported.secret }, { found: legacyAccount });
      expect(await result).toEqual({ outcome: "failure", reason: "wrong_password" });
    });

    it("an unreadable stored algorithm fails like a wrong password, still with one verification", async () => {
      const { result, verified } = attempt({ password: "correct horse" }, { found: { ...legacyAccount, legacyPassword: { scheme: "rot13" } } });
      expect(await result).toEqual({ outcome: "failure", reason: "wrong_password" });
      expect(verified).toHaveLength(1);
    });

    it("every attempt, imported or not, existing or not, eligible or not, makes exactly one verification", async () => {
      const cases = [
        attempt({}, {}),
        attempt({ password: "wrong" }, {}),
        attempt({}, { found: null }),
        attempt({ password: "correct horse" }, { found: legacyAccount }),
        attempt({ password: "wrong" }, { found: legacyAccount }),
        attempt({}, { found: { ...legacyAccount, status: "inactive" } }),
        attempt({}, { found: { ...legacyAccount, lockedUntil: new Date(Date.now() + 60_000) } }),
      ];
      for (const one of cases) {
        await one.result;
        expect(one.verified).toHaveLength(1);
      }
    });
  });
});
