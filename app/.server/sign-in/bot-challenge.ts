import type { Organization } from "~/generated/prisma/client";
import { BOT_CHALLENGE_FIELD, type BotChallenge, type BotChallengeFailure, type BotChallengeForm, type BotChallengePolicy } from "~/schemas/bot-challenge";
import { anonymousActor, type RequestMeta } from "../auth/actors";
import type { LimitName } from "../rate-limit/limiters";
import type { StagedContext } from "../context";
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

type ChallengeContext = StagedContext<"limits" | "botChallenges">;
type PolicyOf = Pick<Organization, "id" | "botChallenge" | "botChallengeCost">;

/** Who a form is about: the client's address, and the email a post names (none on a page load). */
export interface Asker {
  ip: string | null;
  email?: string | undefined;
}

/** Whether the policy asks for a proof now; `counters` are what "suspicion" reads (nothing is read for off or always). */
async function requiredBy(ctx: ChallengeContext, organization: PolicyOf, counters: () => Array<[LimitName, string]>): Promise<boolean> {
  const policy = organization.botChallenge as BotChallengePolicy;
  if (policy === "always") return true;
  if (policy !== "suspicion") return false;
  return (await ctx.limits.highestCount(counters())) >= SUSPICION_FAILURES;
}

function required(ctx: ChallengeContext, organization: PolicyOf, asker: Asker): Promise<boolean> {
  return requiredBy(ctx, organization, () => {
    const counters: Array<[LimitName, string]> = [];
    if (asker.ip) counters.push(["passwordLoginIp", asker.ip]);
    if (asker.email) counters.push(["passwordLogin", passwordLimitKey(organization.id, asker.email)]);
    return counters;
  });
}

/** A refused proof, audited with the form and the reason only (never the payload). */
async function recordRefusal(ctx: ChallengeContext, organization: PolicyOf, form: BotChallengeForm, reason: BotChallengeFailure, meta: RequestMeta): Promise<void> {
  await ctx.transaction(anonymousActor(meta), async (tx) => {
    tx.audit({ eventType: "auth.challenge_failed", organizationId: organization.id, data: { form, reason } });
  });
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
  await recordRefusal(ctx, organization, form, verdict.reason, input.meta);
  return { ok: false, reason: verdict.reason, challenge: await ctx.botChallenges.issue(organization, form) };
}

/** A refused proof's status: the replay store not answering is the server's (503, try again), anything else the post's. */
export const challengeRefusalStatus = (reason: BotChallengeFailure) => (reason === "unavailable" ? 503 : 403);

/** The key of the device-code entry limit (rateLimits.deviceCodeEntry.perIp): per organization and address. */
export const codeEntryLimitKey = (organizationId: string, ip: string | null | undefined) => `${organizationId}:${ip ?? "unknown"}`;

/**
 * The organization's bot protection on the device-code entry page (RFC 8628, decision 049),
 * which oidc-provider renders and whose post it handles: the protocol handler asks before the
 * provider sees the request (features/device-flow.ts) and has no sign-in context of its own, so
 * it gets this, built by the composition root around a context per request.
 *
 * "suspicion" there reads the address's wrong passwords (as the sign-in forms do) and the
 * address's code entries at this organization (rateLimits.deviceCodeEntry.perIp, which counts
 * every entry: a person enters one or two codes, a guesser many): three of either in its window.
 */
export interface CodeEntryChallenges {
  /** Whether a page load or a code entry from `ip` needs a proof now. */
  required(organization: PolicyOf, ip: string | null): Promise<boolean>;
  /** A fresh challenge for the page. */
  issue(organization: PolicyOf): Promise<BotChallenge>;
  /** A posted entry's proof (the field as it came), used up; a refusal is audited. */
  check(organization: PolicyOf, posted: unknown, meta: RequestMeta): Promise<{ ok: true } | { ok: false; reason: BotChallengeFailure }>;
}

export function createCodeEntryChallenges(contextOf: (meta: RequestMeta) => ChallengeContext): CodeEntryChallenges {
  const form: BotChallengeForm = "device";
  return {
    required: (organization, ip) =>
      requiredBy(contextOf({ ip, requestId: null }), organization, () =>
        ip
          ? [
              ["passwordLoginIp", ip],
              ["deviceCodeEntryIp", codeEntryLimitKey(organization.id, ip)],
            ]
          : [],
      ),
    issue: (organization) => contextOf({ ip: null, requestId: null }).botChallenges.issue(organization, form),
    async check(organization, posted, meta) {
      const ctx = contextOf(meta);
      const verdict = await ctx.botChallenges.verify(organization.id, form, posted);
      if (!verdict.ok) await recordRefusal(ctx, organization, form, verdict.reason, meta);
      return verdict;
    },
  };
}
