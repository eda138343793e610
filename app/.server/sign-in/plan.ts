import type { Db } from "../context";

/**
 * Which second factor a sign-in asks for: the organization's policy applied to what the user has
 * set up, or any factor when the relying party asks for two (step-up). Pure but for the read of
 * the enrollment; the flow plans as soon as a first factor proved who signs in (flow.ts).
 */
export type SecondFactorMethod = "totp" | "email" | "passkey";

export interface SecondFactorPlan {
  /** The factors the user may use; more than one means the user chooses. */
  methods: SecondFactorMethod[];
  /** TOTP is required but not set up: enrollment comes first. */
  enrollTotp: boolean;
  /** The user has unused recovery codes, which are accepted in place of the factor. */
  recovery: boolean;
}

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

/** The policy applied to the user's enrollment as stored. */
export async function planSecondFactor(db: Db, userId: string, policy: string): Promise<SecondFactorPlan | null> {
  return planFromEnrollment(await readSecondFactorEnrollment(db, userId), policy);
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
 * relying party accepts only two (step-up, `stepUpRequested` in oidc/features/acr.ts): every account
 * has an email address, so an emailed code is always possible.
 */
export function planForSignIn(enrollment: SecondFactorEnrollment, policy: string, stepUp: boolean): SecondFactorPlan | null {
  return planFromEnrollment(enrollment, policy) ?? (stepUp ? planFromEnrollment(enrollment, "required_any") : null);
}
