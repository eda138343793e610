import type { PasswordHasher } from "../password-hash";
import { inTransaction, type Context, type Db } from "../../context";
import type { JobContext, JobPayloads } from "../../jobs/queue";
import { sendBrandedEmail } from "../../mail/send";
import type { InteractionContext } from "../../sign-in/interaction";
import { accountPageUrl } from "../../oidc/account-client";
import type { Services } from "../../services";
import { NO_REQUEST, userActor, type RequestMeta } from "../actors";
import { finishSignIn, type CompleteSignIn } from "../../sign-in/finish";
import { consumeEach, refundEach, type LimitName } from "../../rate-limit/limiters";
import { MAX_ACTIVE_EMAIL_OTPS } from "./email-otp";
import { countFactorAttempt, forgetFactorFailures, isCountedFactor, isFactorLocked, isRefused, reachesLimit } from "./factor-failures";
import { clearPending, loadPending, primaryOf, savePending, type PendingSecondFactor } from "../../sign-in/pending";
import { generateRecoveryCodes, looksLikeRecoveryCode, normalizeRecoveryCode } from "./recovery-codes";
import { generateTotpSecret, matchTotpStep } from "./totp";

/**
 * The second factor of a sign-in, after a password (never after a magic link), in one module:
 * which factor the organization's policy and the user's enrollment ask for, the step kept on the
 * server between the password and the factor, the checks of each factor with their per-user rate
 * limit and their audit entries (`auth.2fa.verified` / `auth.2fa.failed`), and TOTP enrollment
 * when the policy requires it. A verified factor completes the sign-in through finishSignIn, in
 * the transaction that consumes the code.
 */
export type SecondFactorMethod = "totp" | "email" | "passkey";
/** The factors checked with a typed code (a passkey is checked in app/.server/sign-in/methods/passkey.ts). */
export type VerifyMethod = "totp" | "email" | "recovery";

export interface SecondFactorPlan {
  /** The factors the user may use; more than one means the user chooses. */
  methods: SecondFactorMethod[];
  /** TOTP is required but not set up: enrollment comes first. */
  enrollTotp: boolean;
  /** The user has unused recovery codes, which are accepted in place of the factor. */
  recovery: boolean;
}

export const totpAad = (userId: string) => `totp-secret:${userId}`;

// ---------------------------------------------------------------------------------------------
// The policy

/** What a user has set up that the policy looks at; the password login reads it with the account, in one statement. */
export interface SecondFactorEnrollment {
  emailOtpEnabled: boolean;
  totpEnrolled: boolean;
  /** Whether any recovery code is unused. */
  recoveryLeft: boolean;
  /** Whether the user has registered a passkey. */
  passkey: boolean;
}

/** The user's enrollment, read on its own (the password login reads it with the account instead). */
export async function readSecondFactorEnrollment(db: Db, userId: string): Promise<SecondFactorEnrollment> {
  const [user, totp, recoveryLeft, passkeys] = await Promise.all([
    db.user.findUniqueOrThrow({ where: { id: userId }, select: { emailOtpEnabled: true } }),
    db.totpCredential.findUnique({ where: { userId }, select: { status: true } }),
    db.recoveryCode.count({ where: { userId, usedAt: null } }),
    db.passkey.count({ where: { userId } }),
  ]);
  return { emailOtpEnabled: user.emailOtpEnabled, totpEnrolled: totp?.status === "enrolled", recoveryLeft: recoveryLeft > 0, passkey: passkeys > 0 };
}

export async function planSecondFactor(services: Services, userId: string, policy: string): Promise<SecondFactorPlan | null> {
  return planFromEnrollment(await readSecondFactorEnrollment(services.db.prisma, userId), policy);
}

/** The organization's policy applied to a user's enrollment: the factor the sign-in asks for, or null for none. */
export function planFromEnrollment(enrollment: SecondFactorEnrollment, policy: string): SecondFactorPlan | null {
  const { totpEnrolled, recoveryLeft: recovery } = enrollment;
  // A registered passkey is offered beside whatever else the policy accepts (required_email excepted).
  const passkey: SecondFactorMethod[] = enrollment.passkey ? ["passkey"] : [];
  switch (policy) {
    case "required_email":
      return { methods: ["email"], enrollTotp: false, recovery };
    case "required_totp":
      return totpEnrolled ? { methods: ["totp"], enrollTotp: false, recovery } : { methods: ["totp"], enrollTotp: true, recovery: false };
    case "required_passkey":
      // Without a passkey the step registers one first (sign-in/methods/passkey.ts, enrollPasskeyAtSignIn).
      return { methods: ["passkey"], enrollTotp: false, recovery: enrollment.passkey && recovery };
    case "required_any":
      // Every account has an email address, so email codes are always available.
      return { methods: [...passkey, ...(totpEnrolled ? (["totp"] as const) : []), "email"], enrollTotp: false, recovery };
    default:
      if (totpEnrolled) return { methods: [...passkey, "totp"], enrollTotp: false, recovery };
      if (enrollment.emailOtpEnabled) return { methods: [...passkey, "email"], enrollTotp: false, recovery };
      return null;
  }
}

/**
 * The plan of one sign-in: the organization's policy, or any factor the user can use when the
 * relying party accepts only two (step-up, `stepUpRequested` in oidc/acr.ts): every account
 * has an email address, so an emailed code is always possible.
 */
export function planForSignIn(enrollment: SecondFactorEnrollment, policy: string, stepUp: boolean): SecondFactorPlan | null {
  return planFromEnrollment(enrollment, policy) ?? (stepUp ? planFromEnrollment(enrollment, "required_any") : null);
}

// ---------------------------------------------------------------------------------------------
// The step between the password and the factor

/** After a right password whose plan asks for a factor: keeps the step and returns the page that asks for it. */
export async function startSecondFactor(
  services: Services,
  ic: InteractionContext,
  input: { userId: string; plan: SecondFactorPlan; language: string; primary?: PendingSecondFactor["primary"] },
): Promise<string> {
  const chosen = input.plan.methods.length === 1 ? input.plan.methods[0]! : null;
  await savePending(services.store, ic.uid, {
    userId: input.userId,
    organizationId: ic.organization.id,
    plan: input.plan,
    chosen,
    enrolled: false,
    language: input.language,
    ...(input.primary ? { primary: input.primary } : {}),
  });
  if (input.plan.enrollTotp) return `/interaction/${ic.uid}/two-factor/setup`;
  // A refused factor gets no code: the page offers another way instead.
  if (chosen === "email" && !(await isFactorLocked(services, input.userId, "email"))) await issueEmailOtp(services, input.userId, input.language);
  return `/interaction/${ic.uid}/two-factor`;
}

/** The step of this interaction, or null (no password step, or another organization's). */
export async function loadSecondFactorStep(services: Services, ic: InteractionContext): Promise<PendingSecondFactor | null> {
  const pending = await loadPending(services.store, ic.uid);
  return pending && pending.organizationId === ic.organization.id ? pending : null;
}

export type ResendOutcome = { ok: true } | { ok: false; retryAfterSeconds: number };

/**
 * The person picks one of the plan's factors (anything else changes nothing); an emailed code
 * goes out at once, within the same per-user limit on mails as "send another code": choosing
 * email again and again must not send a mail each time.
 */
export async function chooseSecondFactor(services: Services, ic: InteractionContext, pending: PendingSecondFactor, method: unknown): Promise<ResendOutcome> {
  if ((method !== "totp" && method !== "email" && method !== "passkey") || !pending.plan.methods.includes(method)) return { ok: true };
  await savePending(services.store, ic.uid, { ...pending, chosen: method });
  return method === "email" ? resendEmailOtp(services, pending) : { ok: true };
}

/** Another emailed code, within the per-user limit on mails (each code is one). */
export async function resendEmailOtp(services: Services, pending: PendingSecondFactor): Promise<ResendOutcome> {
  if (await isFactorLocked(services, pending.userId, "email")) return { ok: true };
  const limit = await services.limits.consume("emailOtpResend", pending.userId);
  if (!limit.allowed) return { ok: false, retryAfterSeconds: limit.retryAfterSeconds };
  await issueEmailOtp(services, pending.userId, pending.language);
  return { ok: true };
}

// ---------------------------------------------------------------------------------------------
// Email codes

/** Creates an email code and queues its mail in one transaction; a fourth active code retires the oldest. */
export async function issueEmailOtp(services: Services, userId: string, language: string): Promise<void> {
  await inTransaction(services, userActor(userId, NO_REQUEST), async (ctx) => {
    const id = crypto.randomUUID();
    const ttlMinutes = await ctx.settings.get("auth.emailOtpTtlMinutes");
    await ctx.db.emailOtpCode.create({
      data: {
        id,
        userId,
        codeHash: ctx.otp.hash(ctx.otp.codeFor(id)),
        expiresAt: new Date(Date.now() + ttlMinutes * 60_000),
      },
    });
    const active = await ctx.db.emailOtpCode.findMany({
      where: { userId, usedAt: null, expiresAt: { gt: new Date() } },
      orderBy: { createdAt: "desc" },
      select: { id: true },
    });
    const retired = active.slice(MAX_ACTIVE_EMAIL_OTPS).map((c) => c.id);
    if (retired.length > 0) await ctx.db.emailOtpCode.updateMany({ where: { id: { in: retired } }, data: { usedAt: new Date() } });
    // The code row and its mail job commit together: no code without its mail, no mail without its code.
    await ctx.enqueue("email-otp", { userId, codeId: id, language });
  });
}

/** Mails a code (the job writes nothing: the code row was committed with the job). */
export async function sendEmailOtpJob(services: Services, data: JobPayloads["email-otp"], _job: JobContext): Promise<void> {
  const row = await services.db.prisma.emailOtpCode.findUnique({ where: { id: data.codeId }, include: { user: { include: { organization: true } } } });
  if (!row || row.usedAt || row.expiresAt <= new Date() || row.user.status !== "active") return;
  await sendBrandedEmail(services.mailer, {
    to: row.user.email,
    organization: row.user.organization,
    accountUrl: accountPageUrl(services.config.baseUrl, row.user.organization.slug),
    language: row.user.locale ?? data.language,
    template: { kind: "email-otp", code: services.otp.codeFor(row.id), expiresMinutes: Math.max(1, Math.round((row.expiresAt.getTime() - row.createdAt.getTime()) / 60_000)) },
  });
}

// ---------------------------------------------------------------------------------------------
// Verification

export type VerifyFailureReason = "invalid_code" | "replayed" | "not_enrolled" | "factor_locked";
export type VerifyOutcome = { ok: true } | { ok: false; reason: VerifyFailureReason } | { ok: false; reason: "rate_limited"; retryAfterSeconds: number };

export interface VerifyInput extends RequestMeta {
  userId: string;
  organizationId: string;
  method: VerifyMethod;
  code: string;
}

/** A code that matched, and how to use it up: once, in the transaction that records it. */
type Claim = { ok: true; take: (db: Db) => Promise<VerifyOutcome> } | Exclude<VerifyOutcome, { ok: true }>;

/**
 * Checks one submitted code (rate-limited per user and address per window, and counted per factor
 * across windows: factor-failures.ts) and audits the result. The checks that need no write
 * (Argon2id for recovery codes among them) run first; then one transaction uses the code up,
 * records `auth.2fa.verified` or `auth.2fa.failed` (and `auth.2fa.factor_locked` for the wrong
 * code that reaches the limit), and, given `complete`, completes the sign-in (finishSignIn).
 */
export async function verifySecondFactor(services: Services, input: VerifyInput, complete?: CompleteSignIn): Promise<VerifyOutcome> {
  const limits = secondFactorLimits(input.ip, input.userId);
  const limit = await consumeEach(services.limits, limits);
  const attempt = limit.allowed && isCountedFactor(input.method) ? await countFactorAttempt(services, input.userId, input.method) : null;
  const claim: Claim = !limit.allowed
    ? { ok: false, reason: "rate_limited", retryAfterSeconds: limit.retryAfterSeconds }
    : attempt && isRefused(attempt)
      ? { ok: false, reason: "factor_locked" }
      : await findClaim(services, input);
  const auditMethod = input.method === "email" ? "otp" : input.method;
  const outcome = await inTransaction(services, userActor(input.userId, input), async (ctx) => {
    const outcome = claim.ok ? await claim.take(ctx.db) : claim;
    ctx.audit({
      eventType: outcome.ok ? "auth.2fa.verified" : "auth.2fa.failed",
      organizationId: input.organizationId,
      targetType: "user",
      targetId: input.userId,
      data: outcome.ok ? { userId: input.userId, method: auditMethod } : { userId: input.userId, method: auditMethod, reason: outcome.reason },
    });
    if (attempt && outcome.ok) await forgetFactorFailures(ctx.db, input.userId, attempt.factor);
    if (attempt && !outcome.ok && reachesLimit(attempt)) {
      // The operator's record of the block: the user's page shows it until it is cleared.
      ctx.audit({
        eventType: "auth.2fa.factor_locked",
        organizationId: input.organizationId,
        targetType: "user",
        targetId: input.userId,
        data: { userId: input.userId, method: auditMethod, failures: attempt.failures },
      });
    }
    if (outcome.ok && complete) await complete(ctx, input.userId);
    return outcome;
  });
  // The limit counts failures: a right code gives its point back (decision 066).
  if (outcome.ok) await refundEach(services.limits, limits);
  return outcome;
}

/** The second-factor limits of one attempt: per client address and per user. */
export const secondFactorLimits = (ip: string | null, userId: string): Array<[LimitName, string | null]> => [
  ["twoFactorIp", ip],
  ["twoFactor", userId],
];

async function findClaim(services: Services, input: { userId: string; method: VerifyMethod; code: string }): Promise<Claim> {
  const { prisma } = services.db;
  const { userId } = input;
  const once = (count: number): VerifyOutcome => (count === 1 ? { ok: true } : { ok: false, reason: "replayed" });
  if (input.method === "totp") {
    const credential = await prisma.totpCredential.findUnique({ where: { userId } });
    if (!credential || credential.status !== "enrolled") return { ok: false, reason: "not_enrolled" };
    const step = matchTotpStep(services.encrypter.decrypt(credential.secretEncrypted, totpAad(userId)), input.code);
    if (step === null) return { ok: false, reason: "invalid_code" };
    // Accept each time step once: a code seen before, even within its window, is refused.
    return { ok: true, take: async (db) => once((await db.totpCredential.updateMany({ where: { userId, lastUsedStep: { lt: step } }, data: { lastUsedStep: step } })).count) };
  }
  if (input.method === "email") {
    const code = input.code.replace(/\s+/g, "");
    if (!/^\d{6}$/.test(code)) return { ok: false, reason: "invalid_code" };
    const active = await prisma.emailOtpCode.findMany({ where: { userId, usedAt: null, expiresAt: { gt: new Date() } } });
    const match = active.find((row) => services.otp.matches(code, row.codeHash));
    if (!match) return { ok: false, reason: "invalid_code" };
    return { ok: true, take: async (db) => once((await db.emailOtpCode.updateMany({ where: { id: match.id, usedAt: null }, data: { usedAt: new Date() } })).count) };
  }
  if (!looksLikeRecoveryCode(input.code)) return { ok: false, reason: "invalid_code" };
  const normalized = normalizeRecoveryCode(input.code);
  const unused = await prisma.recoveryCode.findMany({ where: { userId, usedAt: null } });
  for (const row of unused) {
    if (await services.passwords.verify(row.codeHash, normalized)) {
      return { ok: true, take: async (db) => once((await db.recoveryCode.updateMany({ where: { id: row.id, usedAt: null }, data: { usedAt: new Date() } })).count) };
    }
  }
  return { ok: false, reason: "invalid_code" };
}

export type SecondFactorStepOutcome =
  | { kind: "signed_in"; redirectTo: string }
  /** The method is not the chosen one, nor a recovery code the plan allows: back to the step's page. */
  | { kind: "not_offered" }
  | { kind: "failed" }
  /** The factor had too many wrong codes in a row: another way (recovery code, passkey) or an administrator. */
  | { kind: "factor_locked" }
  | { kind: "rate_limited"; retryAfterSeconds: number };

/** The code a person submitted at the step: verified, it completes the sign-in; the step is then over. */
export async function signInWithSecondFactor(
  services: Services,
  ic: InteractionContext,
  pending: PendingSecondFactor,
  input: { method: unknown; code: string; meta: RequestMeta },
): Promise<SecondFactorStepOutcome> {
  const { method } = input;
  const offered: Array<VerifyMethod | "passkey"> = [...(pending.chosen ? [pending.chosen] : []), ...(pending.plan.recovery ? (["recovery"] as const) : [])];
  if ((method !== "totp" && method !== "email" && method !== "recovery") || !offered.includes(method)) return { kind: "not_offered" };
  const { result, redirectTo } = await finishSignIn(services, { at: ic, ...primaryOf(pending), secondFactor: method, meta: input.meta }, (complete) =>
    verifySecondFactor(services, { userId: pending.userId, organizationId: pending.organizationId, method, code: input.code, ...input.meta }, complete),
  );
  if (redirectTo) {
    await clearPending(services.store, ic.uid);
    return { kind: "signed_in", redirectTo };
  }
  if (!result.ok && result.reason === "rate_limited") return { kind: "rate_limited", retryAfterSeconds: result.retryAfterSeconds };
  if (!result.ok && result.reason === "factor_locked") return { kind: "factor_locked" };
  return { kind: "failed" };
}

// ---------------------------------------------------------------------------------------------
// TOTP enrollment

/** Starts (or resumes) TOTP enrollment and returns the secret to show. */
export async function beginTotpEnrollment(services: Services, userId: string): Promise<string> {
  const { prisma } = services.db;
  const existing = await prisma.totpCredential.findUnique({ where: { userId } });
  if (existing?.status === "pending") return services.encrypter.decrypt(existing.secretEncrypted, totpAad(userId));
  if (existing?.status === "enrolled") throw new Error("TOTP is already enrolled");
  const secret = generateTotpSecret();
  await prisma.totpCredential.create({ data: { userId, secretEncrypted: services.encrypter.encrypt(secret, totpAad(userId)) } });
  return secret;
}

/**
 * Completes enrollment with a valid code; returns the ten recovery codes, shown once. The
 * enrollment and its codes commit together (hashed before the transaction); during a sign-in
 * (`signIn`) the transaction also records `auth.2fa.enrolled`.
 */
export async function confirmTotpEnrollment(
  services: Services,
  userId: string,
  code: string,
  signIn?: { organizationId: string; meta: RequestMeta },
): Promise<string[] | null> {
  const credential = await services.db.prisma.totpCredential.findUnique({ where: { userId } });
  if (!credential || credential.status !== "pending") return null;
  const step = matchTotpStep(services.encrypter.decrypt(credential.secretEncrypted, totpAad(userId)), code);
  if (step === null) return null;
  const { codes, hashes } = await newRecoveryCodes(services.passwords);
  return inTransaction(services, userActor(userId, signIn?.meta ?? NO_REQUEST), async (ctx) => {
    const confirmed = await ctx.db.totpCredential.updateMany({
      where: { userId, status: "pending" },
      data: { status: "enrolled", enrolledAt: new Date(), lastUsedStep: step },
    });
    if (confirmed.count !== 1) return null;
    await storeRecoveryCodes(ctx.db, userId, hashes);
    if (signIn) ctx.audit({ eventType: "auth.2fa.enrolled", organizationId: signIn.organizationId, targetType: "user", targetId: userId, data: { method: "totp" } });
    return codes;
  });
}

export type EnrollmentOutcome = { ok: true; recoveryCodes: string[] } | { ok: false; reason: "invalid_code" } | { ok: false; reason: "rate_limited"; retryAfterSeconds: number };

/**
 * Confirms a pending enrollment with its first code, within the per-user limit of second-factor
 * checks (a wrong code counts, a right one gives its point back), and records `auth.2fa.enrolled`.
 */
export async function enrollTotp(services: Services, input: { userId: string; organizationId: string; code: string; meta: RequestMeta }): Promise<EnrollmentOutcome> {
  const limits = secondFactorLimits(input.meta.ip, input.userId);
  const limit = await consumeEach(services.limits, limits);
  if (!limit.allowed) return { ok: false, reason: "rate_limited", retryAfterSeconds: limit.retryAfterSeconds };
  const recoveryCodes = await confirmTotpEnrollment(services, input.userId, input.code, { organizationId: input.organizationId, meta: input.meta });
  if (!recoveryCodes) return { ok: false, reason: "invalid_code" };
  await refundEach(services.limits, limits);
  return { ok: true, recoveryCodes };
}

/** Enrollment at the sign-in step that requires it. */
export async function enrollTotpAtSignIn(services: Services, ic: InteractionContext, pending: PendingSecondFactor, input: { code: string; meta: RequestMeta }): Promise<EnrollmentOutcome> {
  const outcome = await enrollTotp(services, { userId: pending.userId, organizationId: pending.organizationId, code: input.code, meta: input.meta });
  if (outcome.ok) await savePending(services.store, ic.uid, { ...pending, enrolled: true });
  return outcome;
}

/** After the recovery codes were shown: the confirmed enrollment was the second factor, and the sign-in completes. */
export async function signInAfterEnrollment(services: Services, ic: InteractionContext, pending: PendingSecondFactor, meta: RequestMeta): Promise<string | null> {
  if (!pending.enrolled) return null;
  const { redirectTo } = await finishSignIn(services, { at: ic, ...primaryOf(pending), secondFactor: "totp", meta }, (complete) =>
    inTransaction(services, userActor(pending.userId, meta), (ctx) => complete(ctx, pending.userId)),
  );
  await clearPending(services.store, ic.uid);
  return redirectTo;
}

// ---------------------------------------------------------------------------------------------
// Recovery codes

/** Ten fresh codes and their Argon2id hashes (slow: before any transaction). */
export async function newRecoveryCodes(hasher: PasswordHasher): Promise<{ codes: string[]; hashes: string[] }> {
  const codes = generateRecoveryCodes();
  return { codes, hashes: await Promise.all(codes.map((c) => hasher.hash(normalizeRecoveryCode(c)))) };
}

/** Replaces every earlier code of the user, inside the caller's transaction. */
export async function storeRecoveryCodes(db: Db, userId: string, hashes: string[]): Promise<void> {
  await db.recoveryCode.deleteMany({ where: { userId } });
  await db.recoveryCode.createMany({ data: hashes.map((codeHash) => ({ userId, codeHash })) });
}

/** A new set of ten codes replacing every earlier one, in the caller's write. */
export async function replaceRecoveryCodes(ctx: Context<"passwords">, userId: string): Promise<string[]> {
  const { codes, hashes } = await newRecoveryCodes(ctx.passwords);
  await storeRecoveryCodes(ctx.db, userId, hashes);
  return codes;
}
