import { data, type LoaderFunctionArgs, type MetaFunction } from "@remix-run/node";
import { Link, Outlet, useLoaderData } from "@remix-run/react";
import { useTranslation } from "react-i18next";
import { consoleHeaders, NO_STORE } from "~/.server/console/page";
import { requireOrganizationConsole } from "~/.server/console/organization-console";

export const headers = consoleHeaders;
export const meta: MetaFunction = () => [{ title: "Porta" }, { name: "robots", content: "noindex" }];

/**
 * The frame of an organization's console (decision 090): the signed-in administrator, the CSRF
 * token and the permissions of their organization role, in the shape the service console's
 * components read (`useConsoleFrame`), so the pages reuse them.
 */
export async function loader(args: LoaderFunctionArgs) {
  const console = await requireOrganizationConsole(args);
  const org = await console.admin("organizations.get", { params: { id: console.organizationId } });
  return data(
    { slug: console.slug, name: org.ok ? org.body.name : console.slug, language: console.language, email: console.session.email, csrf: console.csrf, permissions: [] as string[] },
    { headers: NO_STORE },
  );
}

export default function OrganizationConsoleFrame() {
  const { slug, name, email } = useLoaderData<typeof loader>();
  const { t } = useTranslation("console");
  const base = `/${slug}/console`;
  return (
    <main className="page">
      <nav aria-label={name} className="breadcrumb">
        <strong>{name}</strong> · <Link to={base}>{t("organizationConsole.users")}</Link> · <Link to={`${base}/identity-providers`}>{t("organizationConsole.sso")}</Link> ·{" "}
        <Link to={`${base}/scim`}>{t("organizationConsole.scim")}</Link> ·{" "}
        <Link to={`${base}/domains`}>{t("organizationConsole.domains")}</Link> · <Link to={`${base}/audit`}>{t("organizationConsole.audit")}</Link> ·{" "}
        <Link to={`${base}/audit-sinks`}>{t("organizationConsole.auditSinks")}</Link> ·{" "}
        {t("organizationConsole.signedInAs", { email })}
      </nav>
      <Outlet />
    </main>
  );
}
