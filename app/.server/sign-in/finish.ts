import type { LoginMethod } from "~/schemas/login-methods";
import { recordLogin } from "../oidc/provider/interaction-results";
import { amrOf, type SecondFactorUsed } from "./amr";
import type { InteractionContext } from "./interaction";
import type { CollaboratorName, UnitRunner } from "../context";
import type { Proof, Prove } from "./method";
import { forgetAllFactorFailures } from "../auth/two-factor/factor-failures";

/**
 * The one place a sign-in ends. Whatever proved who signs in (a password, a password and a second
 * factor, a magic link, a passkey, an upstream provider), the end is the same: the user's
 * `lastLoginAt` and the `auth.login.success` entry that statistics count are written in the
 * transaction of the step's own writes (the consumed code or link, its audit entry), so they
 * commit together or not at all; only then is the login handed to the provider, with the `amr`
 * the factors give.
 *
 * The step's transaction is a closure the step runs through `prove` (method.ts) rather than a
 * callback handed to the step: the step returns its proof from its own transaction, and this
 * module writes the sign-in into it before it commits.
 */
export interface SignIn {
  /** The interaction signed in to: its organization, client and provider record. */
  at: InteractionContext;
  method: LoginMethod;
  /** The second factor that completed the sign-in. */
  secondFactor?: SecondFactorUsed;
  /** The upstream provider of a federated sign-in that a second factor completes (the pending step keeps it). */
  provider?: { id: string; name: string };
}

/**
 * A sign-in with a recovery code or a passkey is the other way that a factor refused after too
 * many wrong codes asks for (auth/two-factor/factor-failures.ts): it lifts that refusal.
 */
const liftsFactorLocks = (signIn: SignIn) => signIn.method === "passkey" || signIn.secondFactor === "passkey" || signIn.secondFactor === "recovery";

function providerOf(signIn: SignIn, proof: Proof) {
  const provider = proof.provider ?? signIn.provider;
  return provider ? { providerId: provider.id, provider: provider.name } : {};
}

/** The runner a method proves with, for one sign-in of one interaction. */
export function proving(ctx: UnitRunner<CollaboratorName>, signIn: SignIn): Prove {
  return async (actor, work) => {
    let proved: Proof | null = null;
    const value = await ctx.transaction(actor, async (tx) => {
      const { value, proof } = await work(tx);
      if (!proof) return value;
      await tx.db.user.update({ where: { id: proof.userId }, data: { ...proof.changes, lastLoginAt: new Date() } });
      if (liftsFactorLocks(signIn)) await forgetAllFactorFailures(tx.db, proof.userId);
      tx.audit({
        eventType: "auth.login.success",
        organizationId: signIn.at.organization.id,
        targetType: "user",
        targetId: proof.userId,
        data: {
          method: signIn.method,
          clientId: signIn.at.client.id,
          ...(signIn.secondFactor ? { secondFactor: signIn.secondFactor } : {}),
          ...providerOf(signIn, proof),
        },
      });
      proved = proof;
      return value;
    });
    // The transaction returned, so it committed (a rollback throws).
    const proof = proved as Proof | null;
    if (!proof) return { value, redirectTo: null };
    // auth_time is the provider's: the moment it resumes with this result.
    const redirectTo = await recordLogin(signIn.at.interaction, {
      accountId: proof.userId,
      amr: amrOf(signIn.method, signIn.secondFactor, proof.passkey, proof.upstreamMfa),
    });
    return { value, redirectTo };
  };
}
