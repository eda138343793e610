import { data, type ActionFunctionArgs, type LoaderFunctionArgs, type MetaFunction } from "@remix-run/node";
import { Form, useActionData, useLoaderData } from "@remix-run/react";
import { useTranslation } from "react-i18next";
import { AuthCard, FormMessage } from "~/components/auth-card";
import { pageTitle } from "~/i18n/page-title";
import { confirmEmailChange, findEmailChangeLink } from "~/.server/account/email";
import { accountContext, anonymousAccountContext } from "~/.server/account/page";
import { readForm } from "~/.server/http/form";
import { resolveLanguage } from "~/.server/i18n";
import { brandingForSlug, brandingOf } from "~/.server/branding/pages";
import { interactionHeaders, NO_STORE } from "~/.server/sign-in/page";

export const meta: MetaFunction<typeof loader> = ({ data }) => [{ title: pageTitle(data?.language, (m) => m.account.email.confirmTitle) }, { name: "robots", content: "noindex" }];
export const headers = interactionHeaders;

/**
 * GET/POST /{slug}/account/email?token=…: the link mailed to a new address (decision 042). It
 * opens in any browser, signed in or not: the token proves the address receives mail, and the
 * change was asked for after a recent sign-in. The GET only shows what will change; the POST
 * (CSRF bound to the link) changes it, so a mail scanner that follows links changes nothing.
 * Every outcome is a branded card whose next step is the organization's account page.
 */
const csrfKey = (linkId: string) => `email-change:${linkId}`;
const languageOf = (request: Request) => resolveLanguage(request, { uiLocales: new URL(request.url).searchParams.get("lang") });

type Ending = "used" | "expired" | "invalid" | "taken";

async function ending(context: LoaderFunctionArgs["context"], slug: string, view: Ending, language: string) {
  const { branding } = await brandingForSlug(anonymousAccountContext(context), slug);
  return data({ view, language, branding, account: branding ? `/${slug.toLowerCase()}/account` : null }, { status: view === "taken" ? 409 : 400, headers: NO_STORE });
}

export async function loader({ request, params, context }: LoaderFunctionArgs) {
  const language = await languageOf(request);
  const token = new URL(request.url).searchParams.get("token") ?? "";
  const link = await findEmailChangeLink(anonymousAccountContext(context), params.slug!, token);
  if (link.status !== "usable") return ending(context, params.slug!, link.status === "unknown" ? "invalid" : link.status, language);
  return data(
    {
      view: "confirm" as const,
      language,
      branding: brandingOf(link.organization),
      account: `/${link.organization.slug}/account`,
      token,
      email: link.newEmail,
      csrf: context.services.csrf.tokenFor(csrfKey(link.id)),
    },
    { headers: NO_STORE },
  );
}

export async function action({ request, params, context }: ActionFunctionArgs) {
  const language = await languageOf(request);
  const form = await readForm(request);
  const link = await findEmailChangeLink(anonymousAccountContext(context), params.slug!, String(form.get("token") ?? ""));
  if (link.status !== "usable") return ending(context, params.slug!, link.status === "unknown" ? "invalid" : link.status, language);
  if (!context.services.csrf.verify(csrfKey(link.id), form.get("csrf"))) return ending(context, params.slug!, "invalid", language);
  const outcome = await confirmEmailChange(accountContext(context, link.userId), link);
  if (!outcome.ok) return ending(context, params.slug!, outcome.reason === "taken" ? "taken" : "used", language);
  // An explicit 200: the loader Remix runs after the action no longer finds a usable link.
  return data({ view: "done" as const, language, branding: brandingOf(link.organization), account: `/${link.organization.slug}/account`, email: outcome.email }, { status: 200, headers: NO_STORE });
}

export default function ConfirmEmailChange() {
  const page = useLoaderData<typeof loader>();
  const result = useActionData<typeof action>();
  const { t } = useTranslation();
  const shown = result ?? page;
  const organization = shown.branding?.name ?? "";
  const toAccount = shown.account ? (
    <p>
      <a className="button" href={shown.account}>
        {t("account.email.toAccount")}
      </a>
    </p>
  ) : null;
  if (shown.view === "confirm") {
    return (
      <AuthCard branding={shown.branding} title={t("account.email.confirmTitle")}>
        <p>{t("account.email.confirmBody", { email: shown.email, organization })}</p>
        <Form method="post" reloadDocument>
          <input type="hidden" name="csrf" value={shown.csrf} />
          <input type="hidden" name="token" value={shown.token} />
          <button className="button" type="submit">
            {t("account.email.confirm")}
          </button>
        </Form>
      </AuthCard>
    );
  }
  if (shown.view === "done") {
    return (
      <AuthCard branding={shown.branding} title={t("account.email.doneTitle")}>
        <FormMessage tone="info">{t("account.email.done", { email: shown.email, organization })}</FormMessage>
        {toAccount}
      </AuthCard>
    );
  }
  const text = { used: "account.email.used", expired: "account.email.expired", invalid: "account.email.invalidLink", taken: "account.email.taken" } as const;
  return (
    <AuthCard branding={shown.branding} title={t(`account.email.${shown.view}Title`)}>
      <FormMessage tone="error">{t(text[shown.view])}</FormMessage>
      {toAccount}
    </AuthCard>
  );
}
