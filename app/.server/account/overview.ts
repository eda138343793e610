import type { Language } from "~/i18n/config";
import type { Context } from "../context";
import { recentSecurityEvents } from "./activity";
import { listAccountApps } from "./apps";
import { pendingEmailChange } from "./email";
import { formatWhen } from "./page";
import { readAccountLinks } from "./federated";
import { readAccountPasskeys } from "./passkeys";
import { hasPassword } from "./password";
import { accountSignOutUrl, mayOpenSensitive, STEP_UP_OPEN_SECONDS, stepUpUrl, type SignedIn } from "./session";
import { listAccountSessions } from "./sessions";
import { readTwoFactorChoices } from "./two-factor";

/** Everything the account page shows, read in parallel, with dates already in the page's language. */
export async function accountOverview(ctx: Context<"store" | "cache" | "settings" | "config">, access: SignedIn, language: Language) {
  const [password, twoFactor, sessions, events, minLength, pendingEmail, passkeys, links, apps] = await Promise.all([
    hasPassword(ctx, access),
    readTwoFactorChoices(ctx, access),
    listAccountSessions(ctx, access),
    recentSecurityEvents(ctx, access),
    ctx.settings.get("auth.passwordMinLength"),
    pendingEmailChange(ctx, access.user.id),
    readAccountPasskeys(ctx, access),
    readAccountLinks(ctx, access),
    listAccountApps(ctx, access),
  ]);
  const { user } = access;
  return {
    profile: { email: user.email, emailVerified: user.emailVerified, givenName: user.givenName, familyName: user.familyName, locale: user.locale, pendingEmail },
    password: { has: password, minLength },
    twoFactor: {
      policy: twoFactor.policy,
      active: twoFactor.active,
      totpEnrolledAt: twoFactor.status.totp.enrolled ? formatWhen(language, twoFactor.status.totp.enrolledAt) : null,
      mayAddTotp: twoFactor.mayAddTotp,
      mayRemoveTotp: twoFactor.mayRemoveTotp,
      emailCodes: twoFactor.emailCodes,
      mayToggleEmail: twoFactor.mayToggleEmail,
      mayRegenerateCodes: twoFactor.mayRegenerateCodes,
      recovery: twoFactor.status.recoveryCodes,
    },
    passkeys: {
      ...passkeys,
      list: passkeys.list.map((p) => ({ id: p.id, name: p.name, synced: p.deviceType === "multiDevice", createdAt: formatWhen(language, p.createdAt)!, lastUsedAt: formatWhen(language, p.lastUsedAt) })),
    },
    federated: links.map((l) => ({ id: l.id, provider: l.providerName, email: l.email, lastUsedAt: formatWhen(language, l.lastUsedAt) })),
    apps: apps.map((a) => ({ ...a, grantedAt: formatWhen(language, a.grantedAt)! })),
    sessions: sessions.map((s) => ({ ...s, signedInAt: formatWhen(language, s.signedInAt), lastSeenAt: formatWhen(language, s.lastSeenAt) })),
    events: events.map((e) => ({ ...e, at: formatWhen(language, e.at)! })),
    fresh: mayOpenSensitive(access),
    stepUpMinutes: STEP_UP_OPEN_SECONDS / 60,
    stepUpUrl: stepUpUrl(ctx.config.baseUrl, access, language, "overview"),
    signOutUrl: accountSignOutUrl(ctx.config.baseUrl, access.organization.slug),
  };
}

export type AccountOverview = Awaited<ReturnType<typeof accountOverview>>;
