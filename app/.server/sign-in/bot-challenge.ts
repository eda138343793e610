import type { Organization } from "~/generated/prisma/client";
import { BOT_CHALLENGE_FIELD, type BotChallenge, type BotChallengeFailure, type BotChallengeForm, type BotChallengePolicy } from "~/schemas/bot-challenge";
import { anonymousActor, type RequestMeta } from "../auth/actors";
import type { LimitName } from "../rate-limit/limiters";
import type { SignInContext } from "./method";
import { passwordLimitKey } from "./methods/password";

/**
 * The organization's bot protection on its sign-in forms (decision 091): whether a form needs a
 * proof of work, the challenge it shows, and the check of a post, before anything else of the
 * post is looked at (no password verified, no mail sent, no limit counted).
 *
 * "suspicion" asks for one once the address, or the account a post names, has this many wrong
 * passwords in the password limits' current window (rateLimits.passwordLogin.*, which count
 * failures only: a right password gives its point back). Three is well under both limits (ten
 * per account, a hundred per address in fifteen minutes), so a guesser pays from its fourth
 * try on, while a person who mistyped twice never sees a challenge.
 */
export const SUSPICION_FAILURES = 3;

type ChallengeContext = SignInContext<"limits" | "botChallenges">;
type PolicyOf = Pick<Organization, "id" | "botChallenge" | "botChallengeCost">;

/** Who a form is about: the client's address, and the email a post names (none on a page load). */
export interface Asker {
  ip: string | null;
  email?: string | undefined;
}

async function required(ctx: ChallengeContext, organization: PolicyOf, asker: Asker): Promise<boolean> {
  const policy = organization.botChallenge as BotChallengePolicy;
  if (policy === "always") return true;
  if (policy !== "suspicion") return false;
  const counters: Array<[LimitName, string]> = [];
  if (asker.ip) counters.push(["passwordLoginIp", asker.ip]);
  if (asker.email) counters.push(["passwordLogin", passwordLimitKey(organization.id, asker.email)]);
  return (await ctx.limits.highestCount(counters)) >= SUSPICION_FAILURES;
}

/** The challenge a form shows now, or null when the organization's policy asks for none. */
export async function challengeForForm(ctx: ChallengeContext, organization: PolicyOf, form: BotChallengeForm, asker: Asker): Promise<BotChallenge | null> {
  return (await required(ctx, organization, asker)) ? ctx.botChallenges.issue(organization, form) : null;
}

export type ChallengeCheck = { ok: true } | { ok: false; reason: BotChallengeFailure; challenge: BotChallenge };

/**
 * A posted form's proof. A refusal is audited (`auth.challenge_failed`, the reason only) and comes
 * with a fresh challenge for the form shown again.
 */
export async function checkBotChallenge(
  ctx: ChallengeContext,
  organization: PolicyOf,
  form: BotChallengeForm,
  input: { posted: FormData; meta: RequestMeta; email?: string | undefined },
): Promise<ChallengeCheck> {
  if (!(await required(ctx, organization, { ip: input.meta.ip, email: input.email }))) return { ok: true };
  const verdict = await ctx.botChallenges.verify(organization.id, form, input.posted.get(BOT_CHALLENGE_FIELD));
  if (verdict.ok) return verdict;
  await ctx.transaction(anonymousActor(input.meta), async (tx) => {
    tx.audit({ eventType: "auth.challenge_failed", organizationId: organization.id, data: { form, reason: verdict.reason } });
  });
  return { ok: false, reason: verdict.reason, challenge: await ctx.botChallenges.issue(organization, form) };
}

/** A refused proof's status: the replay store not answering is the server's (503, try again), anything else the post's. */
export const challengeRefusalStatus = (reason: BotChallengeFailure) => (reason === "unavailable" ? 503 : 403);
