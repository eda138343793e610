import { data, redirect, type LoaderFunctionArgs, type MetaFunction } from "@remix-run/node";
import { useLoaderData } from "@remix-run/react";
import { useTranslation } from "react-i18next";
import { AccountProblem } from "~/components/account/account-page";
import { AuthCard, FormMessage } from "~/components/auth-card";
import { pageTitle } from "~/i18n/page-title";
import { accountReturnPath, accountSignInUrl, discardAccountCode } from "~/.server/account/session";
import { resolveLanguage } from "~/.server/i18n";
import { brandingOf } from "~/.server/branding/pages";
import { interactionHeaders, NO_STORE } from "~/.server/sign-in/page";
import { SlugSchema } from "~/schemas/organization";

export const meta: MetaFunction<typeof loader> = ({ data }) => [{ title: pageTitle(data?.language, (m) => m.account.title) }, { name: "robots", content: "noindex" }];
export const headers = interactionHeaders;

/**
 * GET /{slug}/account/callback: where the account page's sign-in returns. The provider has set
 * the session cookie by now; the code is thrown away and the person goes back to the section
 * that sent them (`state` names one of a closed set, never a URL). A cancelled or failed sign-in
 * says so, with a way to try again.
 */
export async function loader({ request, params, context }: LoaderFunctionArgs) {
  const { services } = context;
  const search = new URL(request.url).searchParams;
  const language = await resolveLanguage(request, {});
  const slug = SlugSchema.safeParse(params.slug);
  const tenant = slug.success ? await services.oidc.get(slug.data) : undefined;
  if (!tenant || tenant.organization.status !== "active") return data({ view: "unknown" as const, language }, { status: 404, headers: NO_STORE });
  const orgSlug = tenant.organization.slug;
  if (search.has("error") || !search.has("code")) {
    const retry = accountSignInUrl(services.config.baseUrl, orgSlug, { returnTo: "overview", uiLocales: language });
    return data({ view: "failed" as const, language, branding: brandingOf(tenant.organization), retry }, { status: 400, headers: NO_STORE });
  }
  await discardAccountCode(tenant, search.get("code"));
  return redirect(accountReturnPath(orgSlug, search.get("state")), { headers: NO_STORE });
}

export default function AccountCallback() {
  const page = useLoaderData<typeof loader>();
  const { t } = useTranslation();
  if (page.view === "unknown") return <AccountProblem page={page} />;
  return (
    <AuthCard branding={page.branding} title={t("account.signInFailedTitle")}>
      <FormMessage tone="error">{t("account.signInFailedBody")}</FormMessage>
      <a className="button" href={page.retry}>
        {t("account.tryAgain")}
      </a>
    </AuthCard>
  );
}
