import type { Services } from "../../services";
import type { JobContext, JobPayloads } from "../../jobs/queue";
import { sendBrandedEmail } from "../../mail/send";
import { MAX_ACTIVE_EMAIL_OTPS } from "./email-otp";
import { generateRecoveryCodes, looksLikeRecoveryCode, normalizeRecoveryCode } from "./recovery-codes";
import { generateTotpSecret, matchTotpStep } from "./totp";

/**
 * Two-factor authentication after a password (never after a magic link): which factor the
 * organization's policy and the user's enrollment ask for, and the checks of each factor.
 */
export type SecondFactorMethod = "totp" | "email";
export type VerifyMethod = SecondFactorMethod | "recovery";

export interface SecondFactorPlan {
  /** The factors the user may use; more than one means the user chooses. */
  methods: SecondFactorMethod[];
  /** TOTP is required but not set up: enrollment comes first. */
  enrollTotp: boolean;
  /** The user has unused recovery codes, which are accepted in place of the factor. */
  recovery: boolean;
}

export const totpAad = (userId: string) => `totp-secret:${userId}`;

export async function planSecondFactor(services: Services, userId: string, policy: string): Promise<SecondFactorPlan | null> {
  const { prisma } = services.db;
  const [user, totp, recoveryLeft] = await Promise.all([
    prisma.user.findUniqueOrThrow({ where: { id: userId }, select: { emailOtpEnabled: true } }),
    prisma.totpCredential.findUnique({ where: { userId }, select: { status: true } }),
    prisma.recoveryCode.count({ where: { userId, usedAt: null } }),
  ]);
  const totpEnrolled = totp?.status === "enrolled";
  const recovery = recoveryLeft > 0;
  switch (policy) {
    case "required_email":
      return { methods: ["email"], enrollTotp: false, recovery };
    case "required_totp":
      return totpEnrolled ? { methods: ["totp"], enrollTotp: false, recovery } : { methods: ["totp"], enrollTotp: true, recovery: false };
    case "required_any":
      // Every account has an email address, so email codes are always available.
      return { methods: totpEnrolled ? ["totp", "email"] : ["email"], enrollTotp: false, recovery };
    default:
      if (totpEnrolled) return { methods: ["totp"], enrollTotp: false, recovery };
      if (user.emailOtpEnabled) return { methods: ["email"], enrollTotp: false, recovery };
      return null;
  }
}

/** Creates an email code and queues its mail; a fourth active code retires the oldest. */
export async function issueEmailOtp(services: Services, userId: string, language: string): Promise<void> {
  const { prisma } = services.db;
  const id = crypto.randomUUID();
  const ttlMinutes = await services.settings.get("auth.emailOtpTtlMinutes");
  await prisma.emailOtpCode.create({
    data: {
      id,
      userId,
      codeHash: services.otp.hash(services.otp.codeFor(id)),
      expiresAt: new Date(Date.now() + ttlMinutes * 60_000),
    },
  });
  const active = await prisma.emailOtpCode.findMany({
    where: { userId, usedAt: null, expiresAt: { gt: new Date() } },
    orderBy: { createdAt: "desc" },
    select: { id: true },
  });
  const retired = active.slice(MAX_ACTIVE_EMAIL_OTPS).map((c) => c.id);
  if (retired.length > 0) await prisma.emailOtpCode.updateMany({ where: { id: { in: retired } }, data: { usedAt: new Date() } });
  await services.jobs.enqueue("email-otp", { userId, codeId: id, language });
}

export async function sendEmailOtpJob(services: Services, data: JobPayloads["email-otp"], _job: JobContext): Promise<void> {
  const row = await services.db.prisma.emailOtpCode.findUnique({ where: { id: data.codeId }, include: { user: { include: { organization: true } } } });
  if (!row || row.usedAt || row.expiresAt <= new Date() || row.user.status !== "active") return;
  await sendBrandedEmail(services.mailer, {
    to: row.user.email,
    organization: row.user.organization,
    language: row.user.locale ?? data.language,
    template: { kind: "email-otp", code: services.otp.codeFor(row.id), expiresMinutes: Math.max(1, Math.round((row.expiresAt.getTime() - row.createdAt.getTime()) / 60_000)) },
  });
}

export type VerifyOutcome = { ok: true } | { ok: false; reason: "invalid_code" | "replayed" | "not_enrolled" } | { ok: false; reason: "rate_limited"; retryAfterSeconds: number };

/** Checks one submitted code (rate-limited per user) and audits the result. */
export async function verifySecondFactor(
  services: Services,
  input: { userId: string; organizationId: string; method: VerifyMethod; code: string; ip: string | null; requestId: string | null },
): Promise<VerifyOutcome> {
  const limit = await services.limits.consume("twoFactor", input.userId);
  const outcome: VerifyOutcome = !limit.allowed ? { ok: false, reason: "rate_limited", retryAfterSeconds: limit.retryAfterSeconds } : await check(services, input);
  const auditMethod = input.method === "email" ? "otp" : input.method;
  await services.audit.record({
    eventType: outcome.ok ? "auth.2fa.verified" : "auth.2fa.failed",
    organizationId: input.organizationId,
    actorType: "user",
    actorId: input.userId,
    targetType: "user",
    targetId: input.userId,
    ip: input.ip,
    requestId: input.requestId,
    data: outcome.ok ? { userId: input.userId, method: auditMethod } : { userId: input.userId, method: auditMethod, reason: outcome.reason },
  });
  return outcome;
}

async function check(services: Services, input: { userId: string; method: VerifyMethod; code: string }): Promise<VerifyOutcome> {
  const { prisma } = services.db;
  if (input.method === "totp") {
    const credential = await prisma.totpCredential.findUnique({ where: { userId: input.userId } });
    if (!credential || credential.status !== "enrolled") return { ok: false, reason: "not_enrolled" };
    const step = matchTotpStep(services.encrypter.decrypt(credential.secretEncrypted, totpAad(input.userId)), input.code);
    if (step === null) return { ok: false, reason: "invalid_code" };
    // Accept each time step once: a code seen before, even within its window, is refused.
    const claimed = await prisma.totpCredential.updateMany({ where: { userId: input.userId, lastUsedStep: { lt: step } }, data: { lastUsedStep: step } });
    return claimed.count === 1 ? { ok: true } : { ok: false, reason: "replayed" };
  }
  if (input.method === "email") {
    const code = input.code.replace(/\s+/g, "");
    if (!/^\d{6}$/.test(code)) return { ok: false, reason: "invalid_code" };
    const active = await prisma.emailOtpCode.findMany({ where: { userId: input.userId, usedAt: null, expiresAt: { gt: new Date() } } });
    const match = active.find((row) => services.otp.matches(code, row.codeHash));
    if (!match) return { ok: false, reason: "invalid_code" };
    const used = await prisma.emailOtpCode.updateMany({ where: { id: match.id, usedAt: null }, data: { usedAt: new Date() } });
    return used.count === 1 ? { ok: true } : { ok: false, reason: "replayed" };
  }
  if (!looksLikeRecoveryCode(input.code)) return { ok: false, reason: "invalid_code" };
  const normalized = normalizeRecoveryCode(input.code);
  const unused = await prisma.recoveryCode.findMany({ where: { userId: input.userId, usedAt: null } });
  for (const row of unused) {
    if (await services.passwords.verify(row.codeHash, normalized)) {
      const used = await prisma.recoveryCode.updateMany({ where: { id: row.id, usedAt: null }, data: { usedAt: new Date() } });
      return used.count === 1 ? { ok: true } : { ok: false, reason: "replayed" };
    }
  }
  return { ok: false, reason: "invalid_code" };
}

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

/** Completes enrollment with a valid code; returns the ten recovery codes, shown once. */
export async function confirmTotpEnrollment(services: Services, userId: string, code: string): Promise<string[] | null> {
  const { prisma } = services.db;
  const credential = await prisma.totpCredential.findUnique({ where: { userId } });
  if (!credential || credential.status !== "pending") return null;
  const step = matchTotpStep(services.encrypter.decrypt(credential.secretEncrypted, totpAad(userId)), code);
  if (step === null) return null;
  await prisma.totpCredential.update({ where: { userId }, data: { status: "enrolled", enrolledAt: new Date(), lastUsedStep: step } });
  return replaceRecoveryCodes(services, userId);
}

/** A new set of ten codes replacing every earlier one. */
export async function replaceRecoveryCodes(services: Services, userId: string): Promise<string[]> {
  const codes = generateRecoveryCodes();
  const hashes = await Promise.all(codes.map((c) => services.passwords.hash(normalizeRecoveryCode(c))));
  await services.db.prisma.$transaction([
    services.db.prisma.recoveryCode.deleteMany({ where: { userId } }),
    services.db.prisma.recoveryCode.createMany({ data: hashes.map((codeHash) => ({ userId, codeHash })) }),
  ]);
  return codes;
}
