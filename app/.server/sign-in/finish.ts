import type { Prisma } from "~/generated/prisma/client";
import type { LoginMethod } from "~/schemas/login-methods";
import type { Context } from "../context";
import type { InteractionContext } from "./interaction";
import { recordLogin } from "../oidc/interaction-results";
import type { Services } from "../services";
import type { RequestMeta } from "../auth/actors";
import { forgetAllFactorFailures } from "../auth/two-factor/factor-failures";

/**
 * The one place a sign-in ends. Whatever proved who signs in (a password, a password and a second
 * factor, a magic link, a passkey), the end is the same: the user's `lastLoginAt` and the
 * `auth.login.success` entry that statistics count are written in the transaction of the step's
 * own writes (the consumed code or link, its audit entry), so they commit together or not at
 * all; only then is the login handed to the provider, with the `amr` the factors give.
 */
export type SecondFactorUsed = "totp" | "email" | "recovery" | "passkey";

export interface SignIn {
  /** The interaction signed in to: its organization, client and provider record. */
  at: InteractionContext;
  method: LoginMethod;
  /** The second factor that completed a password sign-in. */
  secondFactor?: SecondFactorUsed;
  /** How the passkey that signed in (or was the second factor) holds its key (RFC 8176 hwk or swk; decision 041). */
  passkey?: "hwk" | "swk";
  /** A federated sign-in: the upstream provider (named in the audit entry), and whether its sign-in counts as multi-factor (decision 046). */
  provider?: { id: string; name: string };
  upstreamMfa?: boolean;
  meta: RequestMeta;
}

/**
 * Called by a step inside the transaction that commits its own writes, once it has proved who
 * signs in; the step decides the account (a password step only knows it once the password is
 * right), so it passes it here. A step never catches the error of that transaction: a step that
 * returns has committed what `complete` wrote. `changes` are the step's own changes to the user
 * row (a lockout reset, a rehashed password), written in the same UPDATE as `lastLoginAt`: every
 * statement of a sign-in costs about a millisecond of CPU (docs/benchmarks.md).
 */
export type UserChanges = Pick<Prisma.UserUpdateInput, "failedLoginCount" | "lockedUntil" | "passwordHash">;
export type CompleteSignIn = (ctx: Context, userId: string, changes?: UserChanges) => Promise<void>;

/** A step that may complete the sign-in: it runs its checks and its transaction, and calls `complete` in it on success. */
export type SignInStep<R> = (complete: CompleteSignIn) => Promise<R>;

export interface Finished<R> {
  /** The step's own answer (a failure, a second factor to ask for, or its success). */
  result: R;
  /** Where the browser goes next when the sign-in completed (the provider's resume URL); null otherwise. */
  redirectTo: string | null;
}

/** Authentication methods references (RFC 8176) of a sign-in, as the ID token carries them. */
export function amrOf(method: SignIn["method"], secondFactor?: SecondFactorUsed, passkey: "hwk" | "swk" = "hwk", upstreamMfa = false): string[] {
  if (method === "magic_link") return ["email"];
  // Federated (the value Microsoft and others use; RFC 8176 has none): "mfa" when the upstream's sign-in was multi-factor
  // and the provider is trusted for it, or when the organization's own second factor followed.
  if (method === "federated") {
    if (secondFactor) return ["fed", secondFactor === "passkey" ? passkey : secondFactor === "recovery" ? "kba" : "otp", "mfa"];
    return upstreamMfa ? ["fed", "mfa"] : ["fed"];
  }
  // A passkey with user verification: possession of the key and a user gesture (PIN or biometric) on the device.
  if (method === "passkey") return [passkey, "user"];
  if (!secondFactor) return ["pwd"];
  if (secondFactor === "passkey") return ["pwd", passkey, "user", "mfa"];
  return ["pwd", secondFactor === "recovery" ? "kba" : "otp", "mfa"];
}

/**
 * A sign-in with a recovery code or a passkey is the other way that a factor refused after too
 * many wrong codes asks for (two-factor/factor-failures.ts): it lifts that refusal.
 */
const liftsFactorLocks = (signIn: SignIn) => signIn.method === "passkey" || signIn.secondFactor === "passkey" || signIn.secondFactor === "recovery";

export async function finishSignIn<R>(services: Services, signIn: SignIn, step: SignInStep<R>): Promise<Finished<R>> {
  const signedIn: { userId?: string } = {};
  const result = await step(async (ctx, userId, changes) => {
    await ctx.db.user.update({ where: { id: userId }, data: { ...changes, lastLoginAt: new Date() } });
    if (liftsFactorLocks(signIn)) await forgetAllFactorFailures(ctx.db, userId);
    ctx.audit({
      eventType: "auth.login.success",
      organizationId: signIn.at.organization.id,
      targetType: "user",
      targetId: userId,
      data: {
        method: signIn.method,
        clientId: signIn.at.client.id,
        ...(signIn.secondFactor ? { secondFactor: signIn.secondFactor } : {}),
        ...(signIn.provider ? { providerId: signIn.provider.id, provider: signIn.provider.name } : {}),
      },
    });
    signedIn.userId = userId;
  });
  // The step returned, so the transaction `complete` ran in has committed (a rollback throws).
  if (signedIn.userId === undefined) return { result, redirectTo: null };
  // auth_time is the provider's: the moment it resumes with this result.
  const redirectTo = await recordLogin(signIn.at.interaction, { accountId: signedIn.userId, amr: amrOf(signIn.method, signIn.secondFactor, signIn.passkey, signIn.upstreamMfa) });
  return { result, redirectTo };
}
