import type { AuthenticationResponseJSON, PublicKeyCredentialRequestOptionsJSON } from "@simplewebauthn/server";
import { anonymousActor, userActor, type RequestMeta } from "../../auth/actors";
import { consumeEach, refundEach, type LimitName } from "../../rate-limit/limiters";
import { AuthenticationResponseSchema, checkAssertion, parseCredential, startAssertion, type AssertionClaim, type ChallengeBinding } from "../../passkeys/service";
import type { InteractionContext } from "../interaction";
import type { FirstFactor, MethodContext, SignInContext } from "../method";

/**
 * A passkey as the primary method (decision 041): a complete proof, like a magic link, so no
 * second factor follows. The sign-in is recorded in the transaction that records the passkey's
 * use. Every failure is the same generic answer; the audit entry says why.
 */
export const passkey: FirstFactor = { kind: "first", method: "passkey" };

const loginBinding = (ic: InteractionContext): ChallengeBinding => ({ purpose: "login", subject: ic.uid });

/** Options for a discoverable-credential sign-in at this interaction (a new challenge replaces an earlier one). */
export function passkeyLoginOptions(ctx: SignInContext<"config" | "store">, ic: InteractionContext): Promise<PublicKeyCredentialRequestOptionsJSON> {
  return startAssertion(ctx, loginBinding(ic));
}

export type PasskeyStep = { kind: "signed_in"; redirectTo: string } | { kind: "failed" } | { kind: "rate_limited"; retryAfterSeconds: number };

/** The credential a browser posted (form field `credential`, JSON), checked; a right one signs in. */
export async function signInWithPasskey(ctx: MethodContext<"config" | "store" | "limits">, ic: InteractionContext, input: { credential: unknown; meta: RequestMeta }): Promise<PasskeyStep> {
  const limits: Array<[LimitName, string | null]> = [["passkeyLoginIp", input.meta.ip]];
  const limit = await consumeEach(ctx.limits, limits);
  if (!limit.allowed) return { kind: "rate_limited", retryAfterSeconds: limit.retryAfterSeconds };
  const response = parseCredential(AuthenticationResponseSchema, input.credential);
  const claim: AssertionClaim = response
    ? await checkAssertion(ctx, { organizationId: ic.organization.id, binding: loginBinding(ic), response: response as unknown as AuthenticationResponseJSON })
    : { ok: false, reason: "invalid_signature" };
  const { value: proved, redirectTo } = await ctx.prove(claim.ok ? userActor(claim.userId, input.meta) : anonymousActor(input.meta), async (tx) => {
    const fail = (reason: string) => {
      tx.audit({
        eventType: "auth.login.failure",
        organizationId: ic.organization.id,
        ...(claim.userId ? { targetType: "user", targetId: claim.userId } : {}),
        data: { method: "passkey", reason, clientId: ic.client.id },
      });
      return { value: false, proof: null };
    };
    if (!claim.ok) return fail(claim.reason);
    // A deactivated account signs in with nothing; the credential stays for when it comes back.
    const user = await tx.db.user.findFirst({ where: { id: claim.userId, organizationId: ic.organization.id, status: "active" }, select: { id: true } });
    if (!user) return fail("inactive");
    if (!(await claim.take(tx.db))) return fail("replayed");
    return { value: true, proof: { userId: claim.userId, passkey: claim.kind } };
  });
  if (!redirectTo || !proved) return { kind: "failed" };
  // The limit counts failures: a right passkey gives its point back.
  await refundEach(ctx.limits, limits);
  return { kind: "signed_in", redirectTo };
}
