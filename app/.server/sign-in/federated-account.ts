import type { RequestMeta } from "../auth/actors";
import { anonymousActor } from "../auth/actors";
import type { Db, FullContext } from "../context";
import { domainStandingOf, emailTrust, trustOf, type EmailTrust, type ProviderRow } from "../federation/providers";
import { stepUpRequested } from "../oidc/features/acr";
import { planForSignIn, readSecondFactorEnrollment, type SecondFactorPlan } from "./plan";
import type { PendingSecondFactor } from "./pending";
import type { InteractionContext } from "./interaction";
import type { MethodContext, Proved } from "./method";

/**
 * Which account an upstream person is, shared by the sign-in methods that trust an upstream
 * (OpenID Connect and OAuth providers, SAML connections).
 */

/** Claims the mapping names, from the ID token and, when it lacks them, the userinfo endpoint. */
export interface UpstreamPerson {
  subject: string;
  email: string | null;
  /** The email counts as verified on the connection's word (`emailCountsVerified`). */
  emailVerified: boolean;
  /**
   * The upstream itself said the email is verified (OpenID's email_verified, GitHub's verified
   * address). Absent or false, any verification rests on the connection's assumeVerifiedEmails,
   * which links accounts only for a domain the organization verified (decision 086); SAML
   * assertions never say it.
   */
  emailAsserted?: boolean;
  givenName: string | null;
  familyName: string | null;
  /** The upstream said the sign-in used more than one factor (amr mfa, or a multi-factor acr). */
  mfa: boolean;
}

export type Resolution =
  | { ok: true; userId: string; plan: SecondFactorPlan | null; linked: boolean; created: boolean }
  | { ok: false; reason: "no_account" | "unverified_email" | "inactive"; userId?: string; why?: Exclude<EmailTrust, { linkable: true }>["why"] };

export async function resolveAccount(db: Db, ic: InteractionContext, row: ProviderRow, person: UpstreamPerson): Promise<Resolution> {
  const linked = await db.federatedIdentity.findUnique({
    where: { providerId_subject: { providerId: row.id, subject: person.subject } },
    select: { id: true, user: { select: { id: true, status: true, organizationId: true } } },
  });
  if (linked) {
    if (linked.user.organizationId !== ic.organization.id || linked.user.status !== "active") return { ok: false, reason: "inactive", userId: linked.user.id };
    await db.federatedIdentity.update({ where: { id: linked.id }, data: { lastUsedAt: new Date(), ...(person.email ? { email: person.email } : {}) } });
    return { ok: true, userId: linked.user.id, plan: null, linked: false, created: false };
  }
  if (!person.email) return { ok: false, reason: "no_account" };
  const existing = await db.user.findUnique({ where: { organizationId_email: { organizationId: ic.organization.id, email: person.email } }, select: { id: true, status: true } });
  // Linking or creating by email needs the email's domain's standing in the organization (decision 086).
  const trust = person.emailVerified ? emailTrust(row, person, await domainStandingOf(db, ic.organization.id, person.email)) : ({ linkable: false, why: "email_not_verified" } as const);
  if (existing) {
    if (!trust.linkable) return { ok: false, reason: "unverified_email", userId: existing.id, why: trust.why };
    if (existing.status !== "active") return { ok: false, reason: "inactive", userId: existing.id };
    await db.federatedIdentity.create({ data: { organizationId: ic.organization.id, userId: existing.id, providerId: row.id, subject: person.subject, email: person.email, lastUsedAt: new Date() } });
    // The upstream proved the address: the account's email is verified from here on.
    await db.user.update({ where: { id: existing.id }, data: { emailVerified: true } });
    return { ok: true, userId: existing.id, plan: null, linked: true, created: false };
  }
  if (!row.createAccounts) return { ok: false, reason: "no_account" };
  if (!trust.linkable) return { ok: false, reason: "unverified_email", why: trust.why };
  const user = await db.user.create({
    data: { organizationId: ic.organization.id, email: person.email, emailVerified: true, givenName: person.givenName, familyName: person.familyName },
    select: { id: true },
  });
  await db.federatedIdentity.create({ data: { organizationId: ic.organization.id, userId: user.id, providerId: row.id, subject: person.subject, email: person.email, lastUsedAt: new Date() } });
  return { ok: true, userId: user.id, plan: null, linked: true, created: true };
}

export type UpstreamSignInOutcome =
  | { kind: "redirect"; to: string }
  /** The upstream proved who signs in, but the organization's second factor must follow (decision 046). */
  | { kind: "second_factor"; userId: string; plan: SecondFactorPlan; primary: NonNullable<PendingSecondFactor["primary"]> }
  | { kind: "failed"; reason: "no_account" | "unverified_email" | "inactive" | "invalid"; providerName: string };

/**
 * Signs in the person an upstream vouched for, in the transaction that proves it: the account
 * (resolveAccount), its audit entries, what the protocol adds for that account (`alsoFor`: SAML's
 * group roles), then the organization's second factor unless the connection's trust in the
 * upstream's MFA stands in for it. `method` names the protocol in a refusal's audit entry.
 */
export async function signInUpstreamPerson(
  ctx: MethodContext,
  ic: InteractionContext,
  row: ProviderRow,
  person: UpstreamPerson,
  input: { meta: RequestMeta; method: "federated" | "saml"; alsoFor?: (tx: FullContext, userId: string) => Promise<void> },
): Promise<UpstreamSignInOutcome> {
  const trust = trustOf(row);
  const upstreamMfa = trust === "always" || (trust === "when_asserted" && person.mfa);
  const provider = { id: row.id, name: row.name };
  const { value: resolution, redirectTo } = await ctx.prove(anonymousActor(input.meta), async (tx): Promise<Proved<Resolution>> => {
    const resolution = await resolveAccount(tx.db, ic, row, person);
    if (!resolution.ok) {
      tx.audit({
        eventType: "auth.login.failure",
        organizationId: ic.organization.id,
        ...(resolution.userId ? { targetType: "user", targetId: resolution.userId } : {}),
        data: { method: input.method, reason: resolution.reason, ...(resolution.why ? { why: resolution.why } : {}), clientId: ic.client.id, providerId: row.id, ...(person.email ? { email: person.email } : {}) },
      });
      return { value: resolution, proof: null };
    }
    const actorData = { organizationId: ic.organization.id, targetType: "user", targetId: resolution.userId } as const;
    if (resolution.created) tx.audit({ eventType: "user.created", ...actorData, data: { source: "federation", providerId: row.id, provider: row.name } });
    if (resolution.linked) tx.audit({ eventType: "user.federated_identity.linked", ...actorData, data: { providerId: row.id, provider: row.name, subject: person.subject } });
    await input.alsoFor?.(tx, resolution.userId);
    if (!upstreamMfa) {
      const plan = planForSignIn(await readSecondFactorEnrollment(tx.db, resolution.userId), ic.organization.twoFactorPolicy, stepUpRequested(ic.interaction.params));
      if (plan) return { value: { ...resolution, plan }, proof: null };
    }
    return { value: resolution, proof: { userId: resolution.userId, provider, upstreamMfa } };
  });
  if (!resolution.ok) return { kind: "failed", reason: resolution.reason, providerName: row.name };
  if (redirectTo) return { kind: "redirect", to: redirectTo };
  if (!resolution.plan) return { kind: "failed", reason: "invalid", providerName: row.name };
  // The organization's second factor follows an upstream sign-in it does not trust as complete (the flow starts it).
  return { kind: "second_factor", userId: resolution.userId, plan: resolution.plan, primary: { method: "federated", providerId: row.id, providerName: row.name } };
}
