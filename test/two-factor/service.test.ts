import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import {
  disableTwoFactor,
  requireTwoFactorPolicy,
  requireTwoFactorStatus,
  getTwoFactorSummary,
  NotEnrolledError,
  regenerateRecoveryCodes,
  resetTwoFactor,
  setTwoFactorPolicy,
  StaleVersionError,
} from "~/.server/auth/two-factor/admin";
import { EMAIL_OTP_TTL_MINUTES, MAX_ACTIVE_EMAIL_OTPS } from "~/.server/auth/two-factor/email-otp";
import { beginTotpEnrollment, confirmTotpEnrollment, replaceRecoveryCodes } from "~/.server/auth/two-factor/service";
import type { VerifyMethod } from "~/.server/sign-in/code-factor";
import { unitOfWork } from "~/.server/sign-in/door";
import { verifySecondFactor } from "~/.server/sign-in/flow";
import { issueEmailOtp } from "~/.server/sign-in/methods/email-code";
import { planSecondFactor } from "~/.server/sign-in/plan";
import { currentTotpCode, TOTP_PERIOD_SECONDS } from "~/.server/auth/two-factor/totp";
import { NO_REQUEST, systemActor } from "~/.server/auth/actors";
import { inTransaction, readContext, stagedContext, type FullContext } from "~/.server/context";
import { DEFAULT_LIMITS } from "~/.server/rate-limit/limiters";
import { createOrganization, createUser } from "../support/factories";
import { startTestPorta, type TestPorta } from "../support/porta";
import { auditEntries, createUserInState, enrollTotp, freshTotpCode, POLICIES, USER_STATES, type Policy, type Tenant, type UserState } from "./helpers";

/**
 * The two-factor services against a real database (PostgreSQL with DATABASE_URL, else the
 * embedded PGlite) and the real store: what each factor accepts once and refuses after, the
 * limits, the audit trail, and the administrative operations (whose audit records the Admin
 * API's operation layer writes, and tests).
 */
// Argon2id (recovery codes) and a server start per file are slow on a shared, busy machine.
vi.setConfig({ testTimeout: 120_000, hookTimeout: 240_000 });
let porta: TestPorta;
let org: { id: string; slug: string; name: string };
// The services take a context: reads a plain one, writes one over their own transaction.
const read = () => readContext(porta.services, systemActor(null));
const write = <T>(work: (ctx: FullContext) => Promise<T>) => inTransaction(porta.services, systemActor(null), work);
const staged = () => stagedContext(porta.services, systemActor(null));

beforeAll(async () => {
  porta = await startTestPorta();
  org = await createOrganization(porta.services.db.prisma);
});
afterAll(async () => {
  await porta?.stop();
});

const prisma = () => porta.services.db.prisma;
const tenant = (): Tenant => ({ org, client: { id: "unused" }, secret: "", issuer: "" });
const newUser = async (state: UserState = "none") => createUserInState(porta, tenant(), state);

function verify(userId: string, method: VerifyMethod, code: string) {
  return verifySecondFactor(unitOfWork(porta.services, NO_REQUEST), { userId, organizationId: org.id, method, code, ip: "203.0.113.9", requestId: null });
}

/** The user's email codes, newest first, with the code each one carries (the mail job derives it the same way). */
async function emailCodes(userId: string) {
  const rows = await prisma().emailOtpCode.findMany({ where: { userId }, orderBy: { createdAt: "desc" } });
  return rows.map((row) => ({ ...row, code: porta.services.otp.codeFor(row.id) }));
}

describe("TOTP enrollment", () => {
  it("is pending until a valid code confirms it, keeps the secret encrypted, and returns ten recovery codes once", async () => {
    const user = await newUser();
    const secret = await beginTotpEnrollment(staged(), user.id);
    expect(secret).toMatch(/^[A-Z2-7]{32}$/);
    // Resuming an unfinished enrollment shows the same key.
    expect(await beginTotpEnrollment(staged(), user.id)).toBe(secret);
    const pending = await prisma().totpCredential.findUniqueOrThrow({ where: { userId: user.id } });
    expect(pending.status).toBe("pending");
    expect(pending.secretEncrypted).not.toContain(secret);
    expect(await verify(user.id, "totp", currentTotpCode(secret))).toEqual({ ok: false, reason: "not_enrolled" });

    const wrong = currentTotpCode(secret, Date.now() + 5 * TOTP_PERIOD_SECONDS * 1000);
    expect(await confirmTotpEnrollment(staged(), user.id, wrong)).toBeNull();
    const codes = await confirmTotpEnrollment(staged(), user.id, currentTotpCode(secret));
    expect(codes).toHaveLength(10);
    expect(new Set(codes).size).toBe(10);
    for (const code of codes!) expect(code).toMatch(/^[A-Z0-9]{4}-[A-Z0-9]{4}$/);

    const enrolled = await prisma().totpCredential.findUniqueOrThrow({ where: { userId: user.id } });
    expect(enrolled.status).toBe("enrolled");
    expect(enrolled.enrolledAt).toBeInstanceOf(Date);
    const stored = await prisma().recoveryCode.findMany({ where: { userId: user.id } });
    expect(stored).toHaveLength(10);
    for (const row of stored) {
      expect(row.codeHash).toMatch(/^\$argon2id\$/);
      for (const code of codes!) expect(row.codeHash).not.toContain(code.replace("-", ""));
    }
    // Confirming again (an enrolled credential) gives nothing, and a second enrollment is refused.
    expect(await confirmTotpEnrollment(staged(), user.id, currentTotpCode(secret))).toBeNull();
    await expect(beginTotpEnrollment(staged(), user.id)).rejects.toThrow();
  });
});

describe("TOTP verification", () => {
  it("accepts a current code once: the same code again is refused as replayed", async () => {
    const user = await newUser("totp");
    const code = await freshTotpCode(porta, user.id, user.totpSecret!);
    expect(await verify(user.id, "totp", code)).toEqual({ ok: true });
    expect(await verify(user.id, "totp", code)).toEqual({ ok: false, reason: "replayed" });
  });

  it("refuses the code used to confirm the enrollment, and a code of an earlier step than the last accepted one", async () => {
    const user = await newUser();
    const secret = await beginTotpEnrollment(staged(), user.id);
    const enrollmentCode = currentTotpCode(secret);
    await confirmTotpEnrollment(staged(), user.id, enrollmentCode);
    expect(await verify(user.id, "totp", enrollmentCode)).toEqual({ ok: false, reason: "replayed" });

    const later = currentTotpCode(secret, Date.now() + TOTP_PERIOD_SECONDS * 1000);
    expect(await verify(user.id, "totp", later)).toEqual({ ok: true });
    const credential = await prisma().totpCredential.findUniqueOrThrow({ where: { userId: user.id } });
    const earlier = currentTotpCode(secret, (Number(credential.lastUsedStep) - 1) * TOTP_PERIOD_SECONDS * 1000);
    expect(await verify(user.id, "totp", earlier)).toEqual({ ok: false, reason: expect.stringMatching(/^(replayed|invalid_code)$/) });
  });

  it("refuses wrong, malformed and far-off codes as invalid", async () => {
    const user = await newUser("totp");
    const far = currentTotpCode(user.totpSecret!, Date.now() + 10 * TOTP_PERIOD_SECONDS * 1000);
    for (const code of ["", "12345", "1234567", "abcdef", far]) {
      const outcome = await verify(user.id, "totp", code);
      // A far-off code could equal a current one by chance (1 in 10^6); then it is not a wrong code.
      if (code === far && [-1, 0, 1].some((s) => currentTotpCode(user.totpSecret!, Date.now() + s * TOTP_PERIOD_SECONDS * 1000) === far)) continue;
      expect(outcome, code).toEqual({ ok: false, reason: "invalid_code" });
    }
  });

  it("refuses TOTP for a user who has none", async () => {
    const user = await newUser("email");
    expect(await verify(user.id, "totp", "123456")).toEqual({ ok: false, reason: "not_enrolled" });
  });
});

describe("email codes", () => {
  it("are six digits, stored only as an HMAC, and expire after ten minutes", async () => {
    const user = await newUser("email");
    const before = Date.now();
    await issueEmailOtp(unitOfWork(porta.services, NO_REQUEST), user.id, "en");
    const [row] = await emailCodes(user.id);
    expect(row!.code).toMatch(/^\d{6}$/);
    expect(row!.codeHash).toMatch(/^[0-9a-f]{64}$/);
    expect(row!.codeHash).not.toContain(row!.code);
    expect(row!.usedAt).toBeNull();
    const ttl = row!.expiresAt.getTime() - before;
    expect(ttl).toBeGreaterThan(EMAIL_OTP_TTL_MINUTES * 60_000 - 5_000);
    expect(ttl).toBeLessThanOrEqual(EMAIL_OTP_TTL_MINUTES * 60_000 + 5_000);
  });

  it("keep at most three active codes: a fourth retires the oldest, and the three newest still work", async () => {
    const user = await newUser("email");
    for (let i = 0; i < MAX_ACTIVE_EMAIL_OTPS + 1; i++) {
      await issueEmailOtp(unitOfWork(porta.services, NO_REQUEST), user.id, "en");
    }
    const codes = await emailCodes(user.id);
    expect(codes).toHaveLength(4);
    const active = codes.filter((c) => c.usedAt === null);
    expect(active).toHaveLength(MAX_ACTIVE_EMAIL_OTPS);
    const oldest = codes[codes.length - 1]!;
    expect(oldest.usedAt).not.toBeNull();

    // The oldest code no longer verifies (unless it happens to equal a newer one).
    if (!codes.slice(0, 3).some((c) => c.code === oldest.code)) {
      expect(await verify(user.id, "email", oldest.code)).toEqual({ ok: false, reason: "invalid_code" });
    }
    for (const c of codes.slice(0, 3)) expect(await verify(user.id, "email", c.code)).toEqual({ ok: true });
  });

  it("are refused once expired", async () => {
    const user = await newUser("email");
    await issueEmailOtp(unitOfWork(porta.services, NO_REQUEST), user.id, "en");
    const [row] = await emailCodes(user.id);
    await prisma().emailOtpCode.update({ where: { id: row!.id }, data: { expiresAt: new Date(Date.now() - 1000) } });
    expect(await verify(user.id, "email", row!.code)).toEqual({ ok: false, reason: "invalid_code" });
    // Expired codes do not count against the cap either.
    for (let i = 0; i < 3; i++) await issueEmailOtp(unitOfWork(porta.services, NO_REQUEST), user.id, "en");
    const active = await prisma().emailOtpCode.count({ where: { userId: user.id, usedAt: null, expiresAt: { gt: new Date() } } });
    expect(active).toBe(3);
  });

  it("are each used once", async () => {
    const user = await newUser("email");
    await issueEmailOtp(unitOfWork(porta.services, NO_REQUEST), user.id, "en");
    await issueEmailOtp(unitOfWork(porta.services, NO_REQUEST), user.id, "en");
    const [second, first] = await emailCodes(user.id);
    expect(await verify(user.id, "email", first!.code)).toEqual({ ok: true });
    expect(await verify(user.id, "email", first!.code)).toEqual({ ok: false, reason: "invalid_code" });
    // The other active code is still good, once.
    expect(await verify(user.id, "email", ` ${second!.code.slice(0, 3)} ${second!.code.slice(3)} `)).toEqual({ ok: true });
    expect(await verify(user.id, "email", second!.code)).toEqual({ ok: false, reason: "invalid_code" });
  });

  it("belong to their user only", async () => {
    const alice = await newUser("email");
    const bob = await newUser("email");
    await issueEmailOtp(unitOfWork(porta.services, NO_REQUEST), alice.id, "en");
    const [row] = await emailCodes(alice.id);
    expect(await verify(bob.id, "email", row!.code)).toEqual({ ok: false, reason: "invalid_code" });
    expect(await verify(alice.id, "email", row!.code)).toEqual({ ok: true });
  });

  it("refuse malformed input", async () => {
    const user = await newUser("email");
    await issueEmailOtp(unitOfWork(porta.services, NO_REQUEST), user.id, "en");
    for (const code of ["", "12345", "1234567", "abcdef", "12-345"]) expect(await verify(user.id, "email", code)).toEqual({ ok: false, reason: "invalid_code" });
  });
});

describe("recovery codes", () => {
  it("are accepted once each, then refused", async () => {
    const user = await newUser("totp");
    const [code] = user.recoveryCodes!;
    expect(await verify(user.id, "recovery", code!)).toEqual({ ok: true });
    expect(await verify(user.id, "recovery", code!)).toEqual({ ok: false, reason: "invalid_code" });
    const status = await requireTwoFactorStatus(read(), user.id);
    expect(status.recoveryCodes).toEqual({ remaining: 9, total: 10 });
  });

  it("match case- and dash-insensitively, spaces allowed", async () => {
    const user = await newUser("totp");
    const codes = user.recoveryCodes!;
    const variants = [codes[0]!.toLowerCase(), codes[1]!.replace("-", ""), ` ${codes[2]!.replace("-", " ")} `, codes[3]!.toLowerCase().replace("-", "")];
    for (const variant of variants) expect(await verify(user.id, "recovery", variant), variant).toEqual({ ok: true });
    // Each variant used its code: the canonical form is now refused.
    for (const code of codes.slice(0, 4)) expect(await verify(user.id, "recovery", code)).toEqual({ ok: false, reason: "invalid_code" });
  });

  it("refuse codes of other users and malformed input", async () => {
    const alice = await newUser("totp");
    const bob = await newUser("totp");
    expect(await verify(bob.id, "recovery", alice.recoveryCodes![0]!)).toEqual({ ok: false, reason: "invalid_code" });
    for (const code of ["", "ABCD", "ABCD-EFG!", "not a code at all"]) expect(await verify(bob.id, "recovery", code)).toEqual({ ok: false, reason: "invalid_code" });
  });

  it("regenerating (replaceRecoveryCodes) invalidates the whole old set", async () => {
    const user = await newUser("totp");
    const old = user.recoveryCodes!;
    const fresh = await write((ctx) => replaceRecoveryCodes(ctx, user.id));
    expect(fresh).toHaveLength(10);
    expect(fresh.filter((c) => old.includes(c))).toEqual([]);
    expect(await prisma().recoveryCode.count({ where: { userId: user.id } })).toBe(10);
    expect(await verify(user.id, "recovery", old[0]!)).toEqual({ ok: false, reason: "invalid_code" });
    expect(await verify(user.id, "recovery", fresh[0]!)).toEqual({ ok: true });
  });
});

describe("rate limiting", () => {
  it(`allows ${DEFAULT_LIMITS.twoFactor.points} verifications per user, then refuses every method, even a right code`, async () => {
    const user = await newUser("totp");
    const other = await newUser("totp");
    for (let i = 0; i < DEFAULT_LIMITS.twoFactor.points; i++) {
      expect(await verify(user.id, "totp", "000000"), `attempt ${i + 1}`).toMatchObject({ ok: false, reason: expect.stringMatching(/^(invalid_code|replayed)$/) });
    }
    const limited = await verify(user.id, "totp", await freshTotpCode(porta, user.id, user.totpSecret!));
    expect(limited).toMatchObject({ ok: false, reason: "rate_limited" });
    if (limited.ok || limited.reason !== "rate_limited") throw new Error("unreachable");
    expect(limited.retryAfterSeconds).toBeGreaterThan(0);
    expect(limited.retryAfterSeconds).toBeLessThanOrEqual(DEFAULT_LIMITS.twoFactor.durationSeconds);
    expect(await verify(user.id, "recovery", user.recoveryCodes![0]!)).toMatchObject({ ok: false, reason: "rate_limited" });
    // The refused recovery code was not spent.
    expect(await prisma().recoveryCode.count({ where: { userId: user.id, usedAt: null } })).toBe(10);
    // The counter is per user.
    expect(await verify(other.id, "totp", await freshTotpCode(porta, other.id, other.totpSecret!))).toEqual({ ok: true });
  });

  it("limits verifications per client address too, whatever the user, as the rateLimits.twoFactor.perIp entry says", async () => {
    await porta.services.settings.set("rateLimits.twoFactor.perIp", { points: 3, windowMinutes: 15 }, "test");
    try {
      const fromAddress = (userId: string, ip: string) => verifySecondFactor(unitOfWork(porta.services, NO_REQUEST), { userId, organizationId: org.id, method: "totp", code: "000000", ip, requestId: null });
      for (let i = 0; i < 3; i++) expect(await fromAddress((await newUser("totp")).id, "198.51.100.7")).toMatchObject({ ok: false, reason: "invalid_code" });
      const fresh = await newUser("totp");
      const refused = await verifySecondFactor(unitOfWork(porta.services, NO_REQUEST), {
        userId: fresh.id,
        organizationId: org.id,
        method: "totp",
        code: await freshTotpCode(porta, fresh.id, fresh.totpSecret!),
        ip: "198.51.100.7",
        requestId: null,
      });
      expect(refused).toMatchObject({ ok: false, reason: "rate_limited" });
      // Audited as the per-user limit is.
      const [entry] = await auditEntries(porta, { eventType: "auth.2fa.failed", targetId: fresh.id });
      expect(entry!.data).toEqual({ userId: fresh.id, method: "totp", reason: "rate_limited" });
      expect(await fromAddress(fresh.id, "198.51.100.8")).toMatchObject({ ok: false, reason: "invalid_code" });
    } finally {
      await porta.services.settings.set("rateLimits.twoFactor.perIp", { points: 100, windowMinutes: 15 }, "test");
    }
  });

  it("counts failures only: right codes beyond the limit's number are accepted, and failures after them are still limited", async () => {
    const user = await newUser("email");
    const rightCode = async () => {
      await issueEmailOtp(unitOfWork(porta.services, NO_REQUEST), user.id, "en");
      const [row] = await emailCodes(user.id);
      return row!;
    };
    for (let i = 0; i < DEFAULT_LIMITS.twoFactor.points + 2; i++) {
      expect(await verify(user.id, "email", (await rightCode()).code), `success ${i + 1}`).toEqual({ ok: true });
    }
    for (let i = 0; i < DEFAULT_LIMITS.twoFactor.points; i++) {
      expect(await verify(user.id, "email", "000000"), `failure ${i + 1}`).toMatchObject({ ok: false, reason: "invalid_code" });
    }
    const row = await rightCode();
    expect(await verify(user.id, "email", row.code)).toMatchObject({ ok: false, reason: "rate_limited" });
    expect((await prisma().emailOtpCode.findUniqueOrThrow({ where: { id: row.id } })).usedAt).toBeNull();
  });
});

describe("audit", () => {
  it("records auth.2fa.verified with the user id and the method (otp, totp, recovery), and never the code", async () => {
    const user = await newUser("totp");
    await prisma().user.update({ where: { id: user.id }, data: { emailOtpEnabled: true } });
    await issueEmailOtp(unitOfWork(porta.services, NO_REQUEST), user.id, "en");
    const [row] = await emailCodes(user.id);
    const totpCode = await freshTotpCode(porta, user.id, user.totpSecret!);
    expect(await verify(user.id, "email", row!.code)).toEqual({ ok: true });
    expect(await verify(user.id, "totp", totpCode)).toEqual({ ok: true });
    expect(await verify(user.id, "recovery", user.recoveryCodes![0]!)).toEqual({ ok: true });

    const entries = await auditEntries(porta, { eventType: "auth.2fa.verified", targetId: user.id });
    expect(entries.map((e) => e.data)).toEqual([
      { userId: user.id, method: "otp" },
      { userId: user.id, method: "totp" },
      { userId: user.id, method: "recovery" },
    ]);
    for (const entry of entries) {
      expect(entry).toMatchObject({ organizationId: org.id, actorType: "user", actorId: user.id, targetType: "user", ip: "203.0.113.9" });
      const text = JSON.stringify(entry);
      for (const secret of [row!.code, totpCode, user.recoveryCodes![0]!, user.recoveryCodes![0]!.replace("-", "")]) expect(text).not.toContain(secret);
    }
  });

  it("records auth.2fa.failed with the user id, the method and the reason", async () => {
    const user = await newUser("totp");
    const used = await freshTotpCode(porta, user.id, user.totpSecret!);
    await verify(user.id, "totp", used);
    await verify(user.id, "totp", used);
    await verify(user.id, "email", "123456");
    await verify(user.id, "recovery", "WRNG-CODE");
    const noTotp = await newUser();
    await verify(noTotp.id, "totp", "123456");

    const entries = await auditEntries(porta, { eventType: "auth.2fa.failed", targetId: { in: [user.id, noTotp.id] } });
    expect(entries.map((e) => e.data)).toEqual([
      { userId: user.id, method: "totp", reason: "replayed" },
      { userId: user.id, method: "otp", reason: "invalid_code" },
      { userId: user.id, method: "recovery", reason: "invalid_code" },
      { userId: noTotp.id, method: "totp", reason: "not_enrolled" },
    ]);
    for (const entry of entries) expect(JSON.stringify(entry.data)).not.toMatch(/123456|WRNG|CODE/);
  });

  it("records rate-limited attempts as failures with reason rate_limited", async () => {
    const user = await newUser("email");
    for (let i = 0; i <= DEFAULT_LIMITS.twoFactor.points; i++) await verify(user.id, "email", "000000");
    const entries = await auditEntries(porta, { eventType: "auth.2fa.failed", targetId: user.id });
    expect(entries).toHaveLength(DEFAULT_LIMITS.twoFactor.points + 1);
    expect(entries.at(-1)!.data).toEqual({ userId: user.id, method: "otp", reason: "rate_limited" });
  });
});

describe("planSecondFactor (the policy applied after a password)", () => {
  type Plan = Awaited<ReturnType<typeof planSecondFactor>>;
  const expected: Record<Policy, Record<UserState, Plan>> = {
    optional: {
      none: null,
      email: { methods: ["email"], enrollTotp: false, recovery: false },
      totp: { methods: ["totp"], enrollTotp: false, recovery: true },
      "recovery-used": { methods: ["totp"], enrollTotp: false, recovery: false },
    },
    required_email: {
      none: { methods: ["email"], enrollTotp: false, recovery: false },
      email: { methods: ["email"], enrollTotp: false, recovery: false },
      totp: { methods: ["email"], enrollTotp: false, recovery: true },
      "recovery-used": { methods: ["email"], enrollTotp: false, recovery: false },
    },
    required_totp: {
      none: { methods: ["totp"], enrollTotp: true, recovery: false },
      email: { methods: ["totp"], enrollTotp: true, recovery: false },
      totp: { methods: ["totp"], enrollTotp: false, recovery: true },
      "recovery-used": { methods: ["totp"], enrollTotp: false, recovery: false },
    },
    required_any: {
      none: { methods: ["email"], enrollTotp: false, recovery: false },
      email: { methods: ["email"], enrollTotp: false, recovery: false },
      totp: { methods: ["totp", "email"], enrollTotp: false, recovery: true },
      "recovery-used": { methods: ["totp", "email"], enrollTotp: false, recovery: false },
    },
  };

  it("matches the policy table for every policy and user state", async () => {
    const users = {} as Record<UserState, { id: string }>;
    for (const state of USER_STATES) users[state] = await newUser(state);
    for (const policy of POLICIES) {
      for (const state of USER_STATES) {
        expect(await planSecondFactor(porta.services.db.prisma, users[state].id, policy), `${policy} × ${state}`).toEqual(expected[policy][state]);
      }
    }
  });

  it("treats a pending (unconfirmed) TOTP enrollment as not enrolled", async () => {
    const user = await newUser();
    await beginTotpEnrollment(staged(), user.id);
    expect(await planSecondFactor(porta.services.db.prisma, user.id, "optional")).toBeNull();
    expect(await planSecondFactor(porta.services.db.prisma, user.id, "required_totp")).toEqual({ methods: ["totp"], enrollTotp: true, recovery: false });
  });
});

describe("administration", () => {
  it("requireTwoFactorStatus reports TOTP (pending or enrolled), email codes and recovery codes left", async () => {
    const none = await newUser();
    expect(await requireTwoFactorStatus(read(), none.id)).toEqual({
      userId: none.id,
      totp: { enrolled: false, pending: false, enrolledAt: null },
      emailOtp: { enabled: false },
      recoveryCodes: { remaining: 0, total: 0 },
      passkeys: { count: 0 },
    });
    await beginTotpEnrollment(staged(), none.id);
    expect((await requireTwoFactorStatus(read(), none.id)).totp).toEqual({ enrolled: false, pending: true, enrolledAt: null });

    const totp = await newUser("totp");
    await prisma().user.update({ where: { id: totp.id }, data: { emailOtpEnabled: true } });
    await verify(totp.id, "recovery", totp.recoveryCodes![0]!);
    const status = await requireTwoFactorStatus(read(), totp.id);
    expect(status.totp.enrolled).toBe(true);
    expect(status.totp.pending).toBe(false);
    expect(status.totp.enrolledAt).toBeInstanceOf(Date);
    expect(status.emailOtp).toEqual({ enabled: true });
    expect(status.recoveryCodes).toEqual({ remaining: 9, total: 10 });
  });

  it("disableTwoFactor removes TOTP, recovery codes and email codes, and turns email codes off", async () => {
    const user = await newUser("totp");
    await prisma().user.update({ where: { id: user.id }, data: { emailOtpEnabled: true } });
    await issueEmailOtp(unitOfWork(porta.services, NO_REQUEST), user.id, "en");
    const [row] = await emailCodes(user.id);

    const status = await write((ctx) => disableTwoFactor(ctx, user.id));
    expect(status).toEqual({
      userId: user.id,
      totp: { enrolled: false, pending: false, enrolledAt: null },
      emailOtp: { enabled: false },
      recoveryCodes: { remaining: 0, total: 0 },
      passkeys: { count: 0 },
    });
    expect(await verify(user.id, "email", row!.code)).toEqual({ ok: false, reason: "invalid_code" });
    expect(await verify(user.id, "recovery", user.recoveryCodes![1]!)).toEqual({ ok: false, reason: "invalid_code" });
    expect(await verify(user.id, "totp", currentTotpCode(user.totpSecret!))).toEqual({ ok: false, reason: "not_enrolled" });
    expect(await planSecondFactor(porta.services.db.prisma, user.id, "optional")).toBeNull();
  });

  it("resetTwoFactor forgets TOTP and recovery codes but keeps email codes on; required_totp enrolls again", async () => {
    const user = await newUser("totp");
    await prisma().user.update({ where: { id: user.id }, data: { emailOtpEnabled: true } });
    const status = await write((ctx) => resetTwoFactor(ctx, user.id));
    expect(status.totp).toEqual({ enrolled: false, pending: false, enrolledAt: null });
    expect(status.emailOtp).toEqual({ enabled: true });
    expect(status.recoveryCodes).toEqual({ remaining: 0, total: 0 });
    expect(await planSecondFactor(porta.services.db.prisma, user.id, "required_totp")).toEqual({ methods: ["totp"], enrollTotp: true, recovery: false });
    expect(await planSecondFactor(porta.services.db.prisma, user.id, "optional")).toEqual({ methods: ["email"], enrollTotp: false, recovery: false });
    // A new enrollment gets a new key; the old one is worthless.
    const { secret } = await enrollTotp(porta, user.id);
    expect(secret).not.toBe(user.totpSecret);
  });

  it("regenerateRecoveryCodes replaces the set (old codes refused, new ones work) and needs an enrolled TOTP", async () => {
    const user = await newUser("totp");
    const fresh = await write((ctx) => regenerateRecoveryCodes(ctx, user.id));
    expect(fresh).toHaveLength(10);
    for (const old of user.recoveryCodes!.slice(0, 2)) expect(await verify(user.id, "recovery", old)).toEqual({ ok: false, reason: "invalid_code" });
    expect(await verify(user.id, "recovery", fresh[9]!)).toEqual({ ok: true });
    expect((await requireTwoFactorStatus(read(), user.id)).recoveryCodes).toEqual({ remaining: 9, total: 10 });

    const emailOnly = await newUser("email");
    await expect(write((ctx) => regenerateRecoveryCodes(ctx, emailOnly.id))).rejects.toBeInstanceOf(NotEnrolledError);
    const pending = await newUser();
    await beginTotpEnrollment(staged(), pending.id);
    await expect(write((ctx) => regenerateRecoveryCodes(ctx, pending.id))).rejects.toBeInstanceOf(NotEnrolledError);
    expect(await prisma().recoveryCode.count({ where: { userId: { in: [emailOnly.id, pending.id] } } })).toBe(0);
  });

  it("requireTwoFactorPolicy and setTwoFactorPolicy read and write the policy with optimistic concurrency", async () => {
    const own = await createOrganization(prisma());
    const initial = await requireTwoFactorPolicy(read(), own.id);
    expect(initial).toEqual({ organizationId: own.id, policy: "optional", version: own.version });

    const updated = await write((ctx) => setTwoFactorPolicy(ctx, { organizationId: own.id, policy: "required_totp", expectedVersion: initial.version }));
    expect(updated).toEqual({ organizationId: own.id, policy: "required_totp", version: initial.version + 1 });
    expect(await requireTwoFactorPolicy(read(), own.id)).toEqual(updated);

    // A writer holding the old version loses, and changes nothing.
    await expect(
      write((ctx) => setTwoFactorPolicy(ctx, { organizationId: own.id, policy: "required_email", expectedVersion: initial.version })),
    ).rejects.toBeInstanceOf(StaleVersionError);
    expect(await requireTwoFactorPolicy(read(), own.id)).toEqual(updated);

    // Without an expected version the write is unconditional.
    const last = await write((ctx) => setTwoFactorPolicy(ctx, { organizationId: own.id, policy: "required_any" }));
    expect(last).toEqual({ organizationId: own.id, policy: "required_any", version: initial.version + 2 });
  });

  it("getTwoFactorSummary counts, per organization, the users and those with TOTP, email codes and recovery codes left", async () => {
    const own = await createOrganization(prisma());
    const ownTenant: Tenant = { org: own, client: { id: "unused" }, secret: "", issuer: "" };
    await createUserInState(porta, ownTenant, "none");
    await createUserInState(porta, ownTenant, "email");
    const both = await createUserInState(porta, ownTenant, "totp");
    await prisma().user.update({ where: { id: both.id }, data: { emailOtpEnabled: true } });
    await createUserInState(porta, ownTenant, "recovery-used");
    const pending = await createUser(prisma(), own.id);
    await beginTotpEnrollment(staged(), pending.id);
    await write((ctx) => setTwoFactorPolicy(ctx, { organizationId: own.id, policy: "required_any" }));

    const empty = await createOrganization(prisma());
    const deleted = await createOrganization(prisma(), { status: "deleted" });
    await createUserInState(porta, { ...ownTenant, org: deleted }, "totp");

    const summary = await getTwoFactorSummary(read());
    expect(summary.find((s) => s.organizationId === own.id)).toEqual({
      organizationId: own.id,
      slug: own.slug,
      policy: "required_any",
      users: 5,
      byMethod: { totp: 2, email: 2, recoveryCodes: 1, passkey: 0 },
    });
    expect(summary.find((s) => s.organizationId === empty.id)).toEqual({
      organizationId: empty.id,
      slug: empty.slug,
      policy: "optional",
      users: 0,
      byMethod: { totp: 0, email: 0, recoveryCodes: 0, passkey: 0 },
    });
    expect(summary.find((s) => s.organizationId === deleted.id)).toBeUndefined();
    const slugs = summary.map((s) => s.slug);
    expect(slugs).toEqual([...slugs].sort());
  });
});
