import type { CSSProperties, ReactNode } from "react";
import { Form } from "@remix-run/react";
import { useTranslation } from "react-i18next";
import { AuthCard, Field, FormMessage, type BrandingView } from "~/components/auth-card";
import { PasskeysSection, type AccountPasskeysView } from "~/components/account/passkeys-section";
import { FederatedSection, type AccountLinksView } from "~/components/account/federated-section";
import { AppsSection, type AccountAppsView } from "~/components/account/apps-section";
import { RecoveryCodes } from "~/components/recovery-codes";
import { SUPPORTED_LANGUAGES } from "~/i18n/config";

/**
 * The account page (`/{slug}/account`): one branded page, one section per concern, each a plain
 * form that works without script. The server decides what is allowed (the organization's policy,
 * a recent sign-in); the page only shows what it was told may be done.
 */
export type AccountNotice =
  | "profile"
  | "email_sent"
  | "password"
  | "password_set"
  | "totp_added"
  | "totp_removed"
  | "email_on"
  | "email_off"
  | "passkey_added"
  | "passkey_renamed"
  | "passkey_removed"
  | "link_removed"
  | "app_revoked"
  | "session_ended"
  | "others_ended";

export interface AccountView {
  language: string;
  branding: BrandingView;
  csrf: string;
  slug: string;
  notice: AccountNotice | null;
  count: number;
  profile: { email: string; emailVerified: boolean; givenName: string | null; familyName: string | null; locale: string | null; pendingEmail: string | null };
  password: { has: boolean; minLength: number };
  twoFactor: {
    policy: string;
    active: boolean;
    totpEnrolledAt: string | null;
    mayAddTotp: boolean;
    mayRemoveTotp: boolean;
    emailCodes: "on" | "off" | "required" | "unused";
    mayToggleEmail: boolean;
    mayRegenerateCodes: boolean;
    recovery: { remaining: number; total: number };
  };
  passkeys: AccountPasskeysView;
  federated: AccountLinksView;
  apps: AccountAppsView;
  sessions: Array<{ handle: string; current: boolean; signedInAt: string | null; lastSeenAt: string | null; ip: string | null; userAgent: string | null; clients: Array<string | null> }>;
  events: Array<{ at: string; event: string; method: string | null; ip: string | null; byAdmin: boolean; impersonation: { by: string; reason: string } | null }>;
  fresh: boolean;
  stepUpMinutes: number;
  /** The organization's sign-in again (step-up), then back here. */
  stepUpUrl: string;
  signOutUrl: string;
}

/** What an action answered instead of a redirect: a field error, codes shown once, a refusal. */
export type AccountResult =
  | { view: "profile"; fields: Partial<Record<"givenName" | "familyName" | "locale", "too_long" | "unstorable" | "invalid">> }
  | { view: "password"; error: "wrong" | "weak" | "rateLimited"; problem?: string; limit?: number; minutes?: number }
  | { view: "email"; error: "invalid" | "unstorable" | "same" | "rateLimited"; minutes?: number }
  | { view: "codes"; codes: string[] }
  | { view: "refused"; error: "notAllowed" | "gone" | "appGone" | "passkeyName" }
  | { view: "csrf" };

export type AccountProblemView = { view: "unknown"; language: string } | { view: "csrf"; branding: BrandingView; slug: string };

/** An unknown organization (404) or an expired form (403): a card with the way back. */
export function AccountProblem({ page }: { page: AccountProblemView }) {
  const { t } = useTranslation();
  if (page.view === "unknown") {
    return (
      <AuthCard branding={null} title={t("account.unknownTitle")}>
        <p>{t("account.unknownBody")}</p>
      </AuthCard>
    );
  }
  return (
    <AuthCard branding={page.branding} title={t("account.title")}>
      <FormMessage tone="error">{t("account.csrf")}</FormMessage>
      <a className="button" href={`/${page.slug}/account`}>
        {t("account.tryAgain")}
      </a>
    </AuthCard>
  );
}

function Hidden({ csrf, intent }: { csrf: string; intent: string }) {
  return (
    <>
      <input type="hidden" name="csrf" value={csrf} />
      <input type="hidden" name="intent" value={intent} />
    </>
  );
}

function Section({ id, title, children }: { id: string; title: string; children: ReactNode }) {
  return (
    <section id={id} className="card account-section" aria-labelledby={`${id}-title`}>
      <h2 id={`${id}-title`}>{title}</h2>
      {children}
    </section>
  );
}

/** The shell every account page shares: brand, navigation, sign-out, then the sections. */
export function AccountShell({ page, title, children }: { page: Pick<AccountView, "branding" | "slug" | "signOutUrl">; title: string; children: ReactNode }) {
  const { t } = useTranslation();
  const { branding } = page;
  return (
    <div className="account-page" style={branding.cssVariables as CSSProperties}>
      <header className="account-header">
        <a className="account-brand" href={`/${page.slug}/account`}>
          {branding.logoUrl ? <img src={branding.logoUrl} alt={branding.name} className="brand-logo" /> : <span className="brand-name">{branding.name}</span>}
        </a>
        <a className="account-sign-out" href={page.signOutUrl}>
          {t("account.signOut")}
        </a>
      </header>
      <main className="account" aria-labelledby="page-title">
        <h1 id="page-title">{title}</h1>
        {children}
      </main>
      {branding.footerText ? <footer className="brand-footer">{branding.footerText}</footer> : null}
    </div>
  );
}

export function AccountPage({ page, result }: { page: AccountView; result: AccountResult | null }) {
  const { t } = useTranslation();
  const refusal = result?.view === "refused" ? result.error : null;
  return (
    <AccountShell page={page} title={t("account.title")}>
      <p className="muted">{t("account.intro", { email: page.profile.email })}</p>
      <nav aria-label={t("account.nav")} className="account-nav">
        <ul>
          <li>
            <a href="#profile">{t("account.profile.title")}</a>
          </li>
          <li>
            <a href="#email">{t("account.email.title")}</a>
          </li>
          <li>
            <a href="#password">{t("account.password.title")}</a>
          </li>
          <li>
            <a href="#two-factor">{t("account.twoFactor.title")}</a>
          </li>
          <li>
            <a href="#passkeys">{t("account.passkeys.title")}</a>
          </li>
          <li>
            <a href="#apps">{t("account.apps.title")}</a>
          </li>
          <li>
            <a href="#sessions">{t("account.sessions.title")}</a>
          </li>
          <li>
            <a href="#activity">{t("account.activity.title")}</a>
          </li>
        </ul>
      </nav>
      {page.notice ? <FormMessage tone="info">{noticeText(t, page.notice, page.count)}</FormMessage> : null}
      {refusal ? <FormMessage tone="error">{t(REFUSAL_TEXT[refusal])}</FormMessage> : null}
      {result?.view === "codes" ? (
        <Section id="new-codes" title={t("account.twoFactor.recoveryNew")}>
          <p>{t("account.twoFactor.recoveryIntro")}</p>
          <RecoveryCodes codes={result.codes} organizationName={page.branding.name} />
        </Section>
      ) : null}
      <ProfileSection page={page} result={result?.view === "profile" ? result : null} />
      <EmailSection page={page} result={result?.view === "email" ? result : null} />
      <PasswordSection page={page} result={result?.view === "password" ? result : null} />
      <TwoFactorSection page={page} />
      <PasskeysSection page={page} />
      <FederatedSection page={page} />
      <AppsSection page={page} />
      <SessionsSection page={page} />
      <ActivitySection page={page} />
    </AccountShell>
  );
}

type T = ReturnType<typeof useTranslation>["t"];

const REFUSAL_TEXT = {
  notAllowed: "account.notAllowed",
  gone: "account.sessions.gone",
  appGone: "account.apps.gone",
  passkeyName: "account.passkeys.nameRequired",
} as const satisfies Record<Extract<AccountResult, { view: "refused" }>["error"], string>;

function noticeText(t: T, notice: AccountNotice, count: number): string {
  switch (notice) {
    case "profile":
      return t("account.profile.saved");
    case "email_sent":
      return t("account.email.sent");
    case "password":
      return t("account.password.changed");
    case "password_set":
      return t("account.password.set_done");
    case "totp_added":
      return t("account.twoFactor.added");
    case "totp_removed":
      return t("account.twoFactor.removed");
    case "email_on":
      return t("account.twoFactor.emailEnabled");
    case "email_off":
      return t("account.twoFactor.emailDisabled");
    case "passkey_added":
      return t("account.passkeys.added");
    case "passkey_renamed":
      return t("account.passkeys.renamed");
    case "passkey_removed":
      return t("account.passkeys.removed");
    case "link_removed":
      return t("account.federated.removed");
    case "app_revoked":
      return t("account.apps.removed");
    case "session_ended":
      return t("account.sessions.ended");
    case "others_ended":
      return t("account.sessions.endedOthers", { count });
  }
}

function ProfileSection({ page, result }: { page: AccountView; result: Extract<AccountResult, { view: "profile" }> | null }) {
  const { t } = useTranslation();
  const { profile } = page;
  const error = (name: "givenName" | "familyName" | "locale") => {
    const problem = result?.fields[name];
    return problem ? t(`account.profile.${problem === "too_long" ? "tooLong" : problem}`) : undefined;
  };
  return (
    <Section id="profile" title={t("account.profile.title")}>
      <Form method="post" reloadDocument noValidate>
        <Hidden csrf={page.csrf} intent="profile" />
        <Field name="givenName" label={t("account.profile.givenName")} autoComplete="given-name" defaultValue={profile.givenName ?? ""} required={false} error={error("givenName")} />
        <Field name="familyName" label={t("account.profile.familyName")} autoComplete="family-name" defaultValue={profile.familyName ?? ""} required={false} error={error("familyName")} />
        <div className="field">
          <label htmlFor="locale">{t("account.profile.locale")}</label>
          <select id="locale" name="locale" defaultValue={profile.locale ?? ""} aria-invalid={error("locale") ? true : undefined} aria-describedby={error("locale") ? "locale-error" : undefined}>
            <option value="">{t("account.profile.localeDefault")}</option>
            {SUPPORTED_LANGUAGES.map((lng) => (
              <option key={lng} value={lng} lang={lng}>
                {new Intl.DisplayNames([lng], { type: "language" }).of(lng)}
              </option>
            ))}
          </select>
          {error("locale") ? (
            <p id="locale-error" className="field-error" role="alert">
              {error("locale")}
            </p>
          ) : null}
        </div>
        <button className="button button-inline" type="submit">
          {t("account.profile.save")}
        </button>
      </Form>
    </Section>
  );
}

/** The address: shown with its state; a new one is asked for after a recent sign-in and confirmed by a link sent to it. */
function EmailSection({ page, result }: { page: AccountView; result: Extract<AccountResult, { view: "email" }> | null }) {
  const { t } = useTranslation();
  const { profile } = page;
  const error = result ? (result.error === "rateLimited" ? t("account.rateLimited", { count: result.minutes ?? 1 }) : t(`account.email.${result.error}`)) : undefined;
  return (
    <Section id="email" title={t("account.email.title")}>
      <dl className="account-facts">
        <dt>{t("account.profile.email")}</dt>
        <dd>
          {profile.email} <span className="muted">({t(profile.emailVerified ? "account.profile.verified" : "account.profile.notVerified")})</span>
        </dd>
        {profile.pendingEmail ? (
          <>
            <dt>{t("account.email.pending")}</dt>
            <dd>{t("account.email.pendingBody", { email: profile.pendingEmail })}</dd>
          </>
        ) : null}
      </dl>
      {page.fresh ? (
        <Form method="post" reloadDocument noValidate>
          <Hidden csrf={page.csrf} intent="email" />
          <Field name="newEmail" label={t("account.email.new")} type="email" autoComplete="email" hint={t("account.email.hint")} error={error} />
          <button className="button button-inline" type="submit">
            {t("account.email.change")}
          </button>
        </Form>
      ) : (
        <StepUp page={page} />
      )}
    </Section>
  );
}

function StepUp({ page }: { page: AccountView }) {
  const { t } = useTranslation();
  return (
    <div className="account-step-up">
      <p>{t("account.stepUp.body", { count: page.stepUpMinutes })}</p>
      <a className="button button-inline" href={page.stepUpUrl}>
        {t("account.stepUp.button")}
      </a>
    </div>
  );
}

function PasswordSection({ page, result }: { page: AccountView; result: Extract<AccountResult, { view: "password" }> | null }) {
  const { t } = useTranslation();
  const hint = t("passwordPolicy.hint", { limit: page.password.minLength });
  const newError =
    result?.error === "weak" && result.problem ? t(`passwordPolicy.${result.problem}`, { limit: result.limit }) : undefined;
  const endOthers = (
    <p className="checkbox">
      <input type="checkbox" id="endOtherSessions" name="endOtherSessions" defaultChecked />
      <label htmlFor="endOtherSessions">{t("account.password.endOthers")}</label>
    </p>
  );
  if (!page.password.has) {
    return (
      <Section id="password" title={t("account.password.title")}>
        <p>{t("account.password.none")}</p>
        {page.fresh ? (
          <Form method="post" reloadDocument noValidate>
            <Hidden csrf={page.csrf} intent="set-password" />
            <Field name="newPassword" label={t("account.password.new")} type="password" autoComplete="new-password" hint={hint} error={newError} />
            {endOthers}
            <button className="button button-inline" type="submit">
              {t("account.password.set")}
            </button>
          </Form>
        ) : (
          <StepUp page={page} />
        )}
      </Section>
    );
  }
  return (
    <Section id="password" title={t("account.password.title")}>
      {result?.error === "rateLimited" ? <FormMessage tone="error">{t("account.rateLimited", { count: result.minutes })}</FormMessage> : null}
      <Form method="post" reloadDocument noValidate>
        <Hidden csrf={page.csrf} intent="password" />
        <Field name="currentPassword" label={t("account.password.current")} type="password" autoComplete="current-password" error={result?.error === "wrong" ? t("account.password.wrong") : undefined} />
        <Field name="newPassword" label={t("account.password.new")} type="password" autoComplete="new-password" hint={hint} error={newError} />
        {endOthers}
        <button className="button button-inline" type="submit">
          {t("account.password.change")}
        </button>
      </Form>
    </Section>
  );
}

function TwoFactorSection({ page }: { page: AccountView }) {
  const { t } = useTranslation();
  const tf = page.twoFactor;
  const policyText = tf.policy === "optional" ? t(tf.active ? "account.twoFactor.on" : "account.twoFactor.off") : t(`account.twoFactor.policy_${tf.policy}`);
  const button = (intent: string, label: string, extra?: { name: string; value: string }) => (
    <Form method="post" reloadDocument className="inline-form">
      <Hidden csrf={page.csrf} intent={intent} />
      {extra ? <input type="hidden" name={extra.name} value={extra.value} /> : null}
      <button className="button button-secondary button-inline" type="submit">
        {label}
      </button>
    </Form>
  );
  const totpState = tf.totpEnrolledAt
    ? t("account.twoFactor.totpOn", { date: tf.totpEnrolledAt })
    : tf.policy === "required_email"
      ? t("account.twoFactor.totpUnused")
      : tf.policy === "required_passkey"
        ? t("account.twoFactor.totpUnusedPasskey")
        : t("account.twoFactor.totpOff");
  const emailState = {
    on: t("account.twoFactor.emailOn"),
    off: t("account.twoFactor.emailOff"),
    required: t("account.twoFactor.emailRequired"),
    unused: t("account.twoFactor.emailUnused"),
  }[tf.emailCodes];
  return (
    <Section id="two-factor" title={t("account.twoFactor.title")}>
      <p>{policyText}</p>
      {tf.active ? <p className="muted" id="magic-link-note">{t("account.twoFactor.magicLinkNote")}</p> : null}
      {page.fresh ? null : <StepUp page={page} />}
      <dl className="account-facts">
        <dt>{t("account.twoFactor.totp")}</dt>
        <dd>
          <span>{totpState}</span>
          {tf.totpEnrolledAt && !tf.mayRemoveTotp ? <span className="muted"> {t("account.twoFactor.totpRequired")}</span> : null}
          {page.fresh && tf.mayAddTotp ? (
            <a className="button button-secondary button-inline" href={`/${page.slug}/account/two-factor`}>
              {t("account.twoFactor.totpAdd")}
            </a>
          ) : null}
          {page.fresh && tf.mayRemoveTotp ? button("totp-remove", t("account.twoFactor.totpRemove")) : null}
        </dd>
        <dt>{t("account.twoFactor.email")}</dt>
        <dd>
          <span>{emailState}</span>
          {page.fresh && tf.mayToggleEmail
            ? tf.emailCodes === "on"
              ? button("email-codes", t("account.twoFactor.emailDisable"), { name: "value", value: "off" })
              : button("email-codes", t("account.twoFactor.emailEnable"), { name: "value", value: "on" })
            : null}
        </dd>
        <dt>{t("account.twoFactor.recovery")}</dt>
        <dd>
          <span>{tf.recovery.total > 0 ? t("account.twoFactor.recoveryLeft", tf.recovery) : t("account.twoFactor.recoveryNone")}</span>
          {page.fresh && tf.mayRegenerateCodes ? button("recovery-codes", t("account.twoFactor.recoveryRegenerate")) : null}
        </dd>
      </dl>
    </Section>
  );
}

/** "Chrome on Linux" from a User-Agent header: enough to tell one's own devices apart. */
export function describeUserAgent(ua: string | null): string | null {
  if (!ua) return null;
  const browser = [/Edg\//, /OPR\//, /Firefox\//, /Chrome\//, /Safari\//].find((re) => re.test(ua));
  const browserName = browser ? ({ "Edg\\/": "Edge", "OPR\\/": "Opera", "Firefox\\/": "Firefox", "Chrome\\/": "Chrome", "Safari\\/": "Safari" } as Record<string, string>)[browser.source] : null;
  const os = /Android/.test(ua) ? "Android" : /iPhone|iPad/.test(ua) ? "iOS" : /Windows/.test(ua) ? "Windows" : /Mac OS X/.test(ua) ? "macOS" : /Linux/.test(ua) ? "Linux" : null;
  if (browserName && os) return `${browserName} · ${os}`;
  return browserName ?? os ?? ua.slice(0, 60);
}

function SessionsSection({ page }: { page: AccountView }) {
  const { t } = useTranslation();
  const others = page.sessions.filter((s) => !s.current).length;
  return (
    <Section id="sessions" title={t("account.sessions.title")}>
      <ul className="account-list">
        {page.sessions.map((s) => (
          <li key={s.handle} className="account-session">
            <p className="account-session-title">
              <strong>{describeUserAgent(s.userAgent) ?? t("account.sessions.unknownDevice")}</strong>
              {s.current ? <span className="badge">{t("account.sessions.current")}</span> : null}
            </p>
            <p className="muted">
              {[
                s.signedInAt ? t("account.sessions.signedIn", { date: s.signedInAt }) : null,
                s.lastSeenAt ? t("account.sessions.lastSeen", { date: s.lastSeenAt }) : null,
                s.ip ? t("account.sessions.ip", { ip: s.ip }) : null,
              ]
                .filter(Boolean)
                .join(" · ")}
            </p>
            <p className="muted">{t("account.sessions.apps", { names: s.clients.map((c) => c ?? t("account.sessions.accountPage")).join(", ") })}</p>
            {s.current ? null : (
              <Form method="post" reloadDocument>
                <Hidden csrf={page.csrf} intent="end-session" />
                <input type="hidden" name="session" value={s.handle} />
                <button className="button button-secondary button-inline" type="submit">
                  {t("account.sessions.end")}
                </button>
              </Form>
            )}
          </li>
        ))}
      </ul>
      {others > 0 ? (
        <Form method="post" reloadDocument>
          <Hidden csrf={page.csrf} intent="end-other-sessions" />
          <button className="button button-inline" type="submit">
            {t("account.sessions.endOthers")}
          </button>
        </Form>
      ) : (
        <p className="muted">{t("account.sessions.none")}</p>
      )}
    </Section>
  );
}

function ActivitySection({ page }: { page: AccountView }) {
  const { t } = useTranslation();
  return (
    <Section id="activity" title={t("account.activity.title")}>
      {page.events.length === 0 ? (
        <p className="muted">{t("account.activity.none")}</p>
      ) : (
        <ul className="account-list">
          {page.events.map((e, index) => (
            <li key={`${e.at}-${index}`}>
              <strong>{t(`account.activity.events.${e.event}`)}</strong>
              {e.method ? ` (${t(`account.activity.methods.${e.method}`, { defaultValue: e.method })})` : null}
              <span className="muted">
                {" "}
                · {e.at}
                {e.ip ? ` · ${t("account.activity.from", { ip: e.ip })}` : null}
                {e.impersonation ? ` · ${t("account.activity.impersonatedBy", { admin: e.impersonation.by })}` : e.byAdmin ? ` · ${t("account.activity.byAdmin")}` : null}
              </span>
              {e.impersonation ? (
                <>
                  <br />
                  <span className="muted">{t("account.activity.impersonationReason", { reason: e.impersonation.reason })}</span>
                </>
              ) : null}
            </li>
          ))}
        </ul>
      )}
    </Section>
  );
}
