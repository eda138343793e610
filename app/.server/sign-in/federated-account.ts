import type { Db } from "../context";
import type { ProviderRow } from "../federation/providers";
import type { SecondFactorPlan } from "./plan";
import type { InteractionContext } from "./interaction";

/**
 * Which account an upstream person is, shared by the sign-in methods that trust an upstream
 * (OpenID Connect and OAuth providers, SAML connections).
 */

/** Claims the mapping names, from the ID token and, when it lacks them, the userinfo endpoint. */
export interface UpstreamPerson {
  subject: string;
  email: string | null;
  emailVerified: boolean;
  givenName: string | null;
  familyName: string | null;
  /** The upstream said the sign-in used more than one factor (amr mfa, or a multi-factor acr). */
  mfa: boolean;
}

export type Resolution =
  | { ok: true; userId: string; plan: SecondFactorPlan | null; linked: boolean; created: boolean }
  | { ok: false; reason: "no_account" | "unverified_email" | "inactive"; userId?: string };

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
  if (existing) {
    if (!person.emailVerified) return { ok: false, reason: "unverified_email", userId: existing.id };
    if (existing.status !== "active") return { ok: false, reason: "inactive", userId: existing.id };
    await db.federatedIdentity.create({ data: { organizationId: ic.organization.id, userId: existing.id, providerId: row.id, subject: person.subject, email: person.email, lastUsedAt: new Date() } });
    // The upstream proved the address: the account's email is verified from here on.
    await db.user.update({ where: { id: existing.id }, data: { emailVerified: true } });
    return { ok: true, userId: existing.id, plan: null, linked: true, created: false };
  }
  if (!row.createAccounts) return { ok: false, reason: "no_account" };
  if (!person.emailVerified) return { ok: false, reason: "unverified_email" };
  const user = await db.user.create({
    data: { organizationId: ic.organization.id, email: person.email, emailVerified: true, givenName: person.givenName, familyName: person.familyName },
    select: { id: true },
  });
  await db.federatedIdentity.create({ data: { organizationId: ic.organization.id, userId: user.id, providerId: row.id, subject: person.subject, email: person.email, lastUsedAt: new Date() } });
  return { ok: true, userId: user.id, plan: null, linked: true, created: true };
}
