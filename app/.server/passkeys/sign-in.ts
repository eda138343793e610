import type { AuthenticationResponseJSON, PublicKeyCredentialRequestOptionsJSON } from "@simplewebauthn/server";
import { anonymousActor, userActor, type RequestMeta } from "../auth/actors";
import { finishSignIn } from "../auth/finish-sign-in";
import { clearPending, type PendingSecondFactor } from "../auth/two-factor/pending";
import { secondFactorLimits } from "../auth/two-factor/service";
import { inTransaction } from "../context";
import type { InteractionContext } from "../interaction/context";
import { consumeEach, refundEach, type LimitName } from "../rate-limit/limiters";
import type { Services } from "../services";
import { AuthenticationResponseSchema, checkAssertion, parseCredential, startAssertion, type AssertionClaim, type ChallengeBinding } from "./service";

/**
 * A passkey at the sign-in pages: as the primary method (a complete proof, like a magic link:
 * no second factor follows) and as the second factor after a password. Both end through
 * finishSignIn in the transaction that records the passkey's use. Every failure is the same
 * generic answer; the audit entry says why.
 */

const loginBinding = (ic: InteractionContext): ChallengeBinding => ({ purpose: "login", subject: ic.uid });
const secondFactorBinding = (ic: InteractionContext): ChallengeBinding => ({ purpose: "second-factor", subject: ic.uid });

/** Options for a discoverable-credential sign-in at this interaction (a new challenge replaces an earlier one). */
export function passkeyLoginOptions(services: Services, ic: InteractionContext): Promise<PublicKeyCredentialRequestOptionsJSON> {
  return startAssertion(services, loginBinding(ic));
}

export type PasskeyStep = { kind: "signed_in"; redirectTo: string } | { kind: "failed" } | { kind: "rate_limited"; retryAfterSeconds: number };

/** The credential a browser posted (form field `credential`, JSON), checked; a right one signs in. */
export async function signInWithPasskey(services: Services, ic: InteractionContext, input: { credential: unknown; meta: RequestMeta }): Promise<PasskeyStep> {
  const limits: Array<[LimitName, string | null]> = [["passkeyLoginIp", input.meta.ip]];
  const limit = await consumeEach(services.limits, limits);
  if (!limit.allowed) return { kind: "rate_limited", retryAfterSeconds: limit.retryAfterSeconds };
  const response = parseCredential(AuthenticationResponseSchema, input.credential);
  const claim: AssertionClaim = response
    ? await checkAssertion(services, { organizationId: ic.organization.id, binding: loginBinding(ic), response: response as unknown as AuthenticationResponseJSON })
    : { ok: false, reason: "invalid_signature" };
  const kind = claim.ok ? claim.kind : "hwk";
  const { result, redirectTo } = await finishSignIn(services, { at: ic, method: "passkey", passkey: kind, meta: input.meta }, (complete) =>
    inTransaction(services, claim.ok ? userActor(claim.userId, input.meta) : anonymousActor(input.meta), async (ctx) => {
      const fail = (reason: string) => {
        ctx.audit({
          eventType: "auth.login.failure",
          organizationId: ic.organization.id,
          ...(claim.userId ? { targetType: "user", targetId: claim.userId } : {}),
          data: { method: "passkey", reason, clientId: ic.client.id },
        });
        return false;
      };
      if (!claim.ok) return fail(claim.reason);
      // A deactivated account signs in with nothing; the credential stays for when it comes back.
      const user = await ctx.db.user.findFirst({ where: { id: claim.userId, organizationId: ic.organization.id, status: "active" }, select: { id: true } });
      if (!user) return fail("inactive");
      if (!(await claim.take(ctx.db))) return fail("replayed");
      await complete(ctx, claim.userId);
      return true;
    }),
  );
  if (!redirectTo || !result) return { kind: "failed" };
  // The limit counts failures: a right passkey gives its point back.
  await refundEach(services.limits, limits);
  return { kind: "signed_in", redirectTo };
}

// ---------------------------------------------------------------------------------------------
// The second factor

/** Options for the user's own passkeys at the second-factor step, or null when the step does not offer a passkey. */
export async function passkeySecondFactorOptions(services: Services, ic: InteractionContext, pending: PendingSecondFactor): Promise<PublicKeyCredentialRequestOptionsJSON | null> {
  if (!pending.plan.methods.includes("passkey")) return null;
  return startAssertion(services, secondFactorBinding(ic), pending.userId);
}

/** A passkey as the second factor after a password: audited `auth.2fa.verified`/`failed` with method passkey. */
export async function verifyPasskeySecondFactor(
  services: Services,
  ic: InteractionContext,
  pending: PendingSecondFactor,
  input: { credential: unknown; meta: RequestMeta },
): Promise<PasskeyStep | { kind: "not_offered" }> {
  if (!pending.plan.methods.includes("passkey")) return { kind: "not_offered" };
  const limits = secondFactorLimits(input.meta.ip, pending.userId);
  const limit = await consumeEach(services.limits, limits);
  if (!limit.allowed) return { kind: "rate_limited", retryAfterSeconds: limit.retryAfterSeconds };
  const response = parseCredential(AuthenticationResponseSchema, input.credential);
  const claim: AssertionClaim = response
    ? await checkAssertion(services, {
        organizationId: ic.organization.id,
        binding: secondFactorBinding(ic),
        response: response as unknown as AuthenticationResponseJSON,
        userId: pending.userId,
      })
    : { ok: false, reason: "invalid_signature" };
  const kind = claim.ok ? claim.kind : "hwk";
  const { result, redirectTo } = await finishSignIn(services, { at: ic, method: "password", secondFactor: "passkey", passkey: kind, meta: input.meta }, (complete) =>
    inTransaction(services, userActor(pending.userId, input.meta), async (ctx) => {
      const reason = !claim.ok ? claim.reason : (await claim.take(ctx.db)) ? null : "replayed";
      ctx.audit({
        eventType: reason ? "auth.2fa.failed" : "auth.2fa.verified",
        organizationId: ic.organization.id,
        targetType: "user",
        targetId: pending.userId,
        data: reason ? { userId: pending.userId, method: "passkey", reason } : { userId: pending.userId, method: "passkey" },
      });
      if (reason) return false;
      await complete(ctx, pending.userId);
      return true;
    }),
  );
  if (!redirectTo || !result) return { kind: "failed" };
  await refundEach(services.limits, limits);
  await clearPending(services.store, ic.uid);
  return { kind: "signed_in", redirectTo };
}
