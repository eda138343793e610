import { data, redirect, type ActionFunctionArgs, type LoaderFunctionArgs, type MetaFunction } from "@remix-run/node";
import { useActionData, useLoaderData } from "@remix-run/react";
import { useTranslation } from "react-i18next";
import { AccountProblem, AccountShell } from "~/components/account/account-page";
import { FormMessage } from "~/components/auth-card";
import { TotpSetupForm } from "~/components/totp-setup";
import { RecoveryCodes } from "~/components/recovery-codes";
import { pageTitle } from "~/i18n/page-title";
import { openAccountPage, stepUp } from "~/.server/account/page";
import { accountSignOutUrl, mayOpenSensitive } from "~/.server/account/session";
import { finishTotpSetup, startTotpSetup } from "~/.server/account/two-factor";
import { totpQrDataUrl, totpUri } from "~/.server/auth/two-factor/totp";
import { interactionHeaders, isAfterAction, NO_STORE } from "~/.server/sign-in/page";

export const meta: MetaFunction<typeof loader> = ({ data }) => [{ title: pageTitle(data?.language, (m) => m.twoFactor.setupTitle) }, { name: "robots", content: "noindex" }];
export const headers = interactionHeaders;

/**
 * GET/POST /{slug}/account/two-factor: setting up an authenticator app from the account page
 * (under `optional` this is how a person turns two-factor on): QR code and key, a first code to
 * confirm, then the recovery codes, shown once. Needs a recent sign-in; refused where the
 * organization's policy does not use authenticator apps.
 */
export async function loader(args: LoaderFunctionArgs) {
  const page = await openAccountPage(args, "two-factor");
  if (!page.open) return page.response;
  const { services } = args.context;
  const shell = { ...page.frame, signOutUrl: accountSignOutUrl(services.config.baseUrl, page.frame.slug) };
  // Remix renders the action's answer (the recovery codes) with this loader run after it: no new secret then.
  if (isAfterAction(args.context)) return data({ view: "after" as const, ...shell, secret: "", qr: "" }, { headers: NO_STORE });
  if (!mayOpenSensitive(page.access)) return stepUp(args.context, page, "two-factor");
  const started = await startTotpSetup(page.ctx, page.access);
  if (!started.ok) return redirect(`/${page.frame.slug}/account`, { headers: NO_STORE });
  const uri = totpUri(started.secret, page.frame.branding.name, page.access.user.email);
  return data(
    {
      view: "setup" as const,
      ...shell,
      secret: started.secret.replace(/(.{4})/g, "$1 ").trim(),
      qr: await totpQrDataUrl(uri),
    },
    { headers: NO_STORE },
  );
}

export async function action(args: ActionFunctionArgs) {
  const page = await openAccountPage(args, "two-factor");
  if (!page.open) return page.response;
  const outcome = await finishTotpSetup(page.ctx, page.access, String(page.form.get("code") ?? "").slice(0, 16), page.meta);
  if (outcome.ok) return data({ view: "codes" as const, codes: outcome.recoveryCodes }, { headers: NO_STORE });
  switch (outcome.reason) {
    case "step_up":
      return stepUp(args.context, page, "two-factor");
    case "not_allowed":
      return redirect(`/${page.frame.slug}/account`, { status: 303, headers: NO_STORE });
    case "rate_limited":
      return data({ view: "failed" as const, minutes: Math.ceil(outcome.retryAfterSeconds / 60) }, { status: 429, headers: { ...NO_STORE, "Retry-After": String(outcome.retryAfterSeconds) } });
    default:
      return data({ view: "failed" as const, minutes: 0 }, { status: 422, headers: NO_STORE });
  }
}

export default function AccountTwoFactor() {
  const page = useLoaderData<typeof loader>();
  const result = useActionData<typeof action>();
  const { t } = useTranslation();
  if (page.view !== "setup" && page.view !== "after") return <AccountProblem page={page} />;
  if (result && result.view === "csrf") return <AccountProblem page={result} />;
  if (result?.view === "codes") {
    return (
      <AccountShell page={page} title={t("twoFactor.codesTitle")}>
        <section className="card account-section">
          <FormMessage tone="info">{t("account.twoFactor.added")}</FormMessage>
          <p>{t("twoFactor.codesIntro")}</p>
          <RecoveryCodes codes={result.codes} organizationName={page.branding.name} />
          <a className="button" href={`/${page.slug}/account?done=totp_added`}>
            {t("account.twoFactor.done")}
          </a>
        </section>
      </AccountShell>
    );
  }
  const failed = result?.view === "failed" ? (result.minutes > 0 ? t("twoFactor.rateLimited", { count: result.minutes }) : t("twoFactor.setupFailed")) : undefined;
  return (
    <AccountShell page={page} title={t("twoFactor.setupTitle")}>
      <section className="card account-section">
        <p>{t("account.twoFactor.setupIntro")}</p>
        <TotpSetupForm qr={page.qr} secret={page.secret} csrf={page.csrf} error={failed} />
        <p className="links">
          <a href={`/${page.slug}/account`}>{t("account.twoFactor.done")}</a>
        </p>
      </section>
    </AccountShell>
  );
}
