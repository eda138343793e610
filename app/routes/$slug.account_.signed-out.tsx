import { data, type LoaderFunctionArgs, type MetaFunction } from "@remix-run/node";
import { useLoaderData } from "@remix-run/react";
import { useTranslation } from "react-i18next";
import { AccountProblem } from "~/components/account/account-page";
import { AuthCard, FormMessage } from "~/components/auth-card";
import { pageTitle } from "~/i18n/page-title";
import { resolveLanguage } from "~/.server/i18n";
import { brandingOf } from "~/.server/branding/pages";
import { interactionHeaders, NO_STORE } from "~/.server/sign-in/page";
import { SlugSchema } from "~/schemas/organization";

export const meta: MetaFunction<typeof loader> = ({ data }) => [{ title: pageTitle(data?.language, (m) => m.account.signedOutTitle) }, { name: "robots", content: "noindex" }];
export const headers = interactionHeaders;

/** GET /{slug}/account/signed-out: where signing out of the account page ends, with the way back in. */
export async function loader({ request, params, context }: LoaderFunctionArgs) {
  const language = await resolveLanguage(request, {});
  const slug = SlugSchema.safeParse(params.slug);
  const tenant = slug.success ? await context.services.oidc.get(slug.data) : undefined;
  if (!tenant || tenant.organization.status !== "active") return data({ view: "unknown" as const, language }, { status: 404, headers: NO_STORE });
  return data({ view: "signed-out" as const, language, branding: brandingOf(tenant.organization), slug: tenant.organization.slug }, { headers: NO_STORE });
}

export default function AccountSignedOut() {
  const page = useLoaderData<typeof loader>();
  const { t } = useTranslation();
  if (page.view === "unknown") return <AccountProblem page={page} />;
  return (
    <AuthCard branding={page.branding} title={t("account.signedOutTitle")}>
      <FormMessage tone="info">{t("account.signedOutBody", { organization: page.branding.name })}</FormMessage>
      <a className="button" href={`/${page.slug}/account`}>
        {t("account.signInAgain")}
      </a>
    </AuthCard>
  );
}
