import { data, redirect, type ActionFunctionArgs, type LoaderFunctionArgs, type MetaFunction } from "@remix-run/node";
import { Form, Link, useActionData, useLoaderData, useParams } from "@remix-run/react";
import { useTranslation } from "react-i18next";
import { consoleHeaders, NO_STORE } from "~/.server/console/page";
import { requireOrganizationConsole, requireOrganizationConsoleForm } from "~/.server/console/organization-console";
import { ListTable } from "~/components/console/list-table";
import { detailErrors, text, zodFieldErrors } from "~/components/console/forms";
import { IDENTITY_PROVIDER_FIELDS, IdentityProviderFields, identityProviderInput } from "~/components/console/identity-provider-fields";
import { SAML_ERROR_FIELDS, SAML_FIELDS, SamlCreateFields, samlCreateInput } from "~/components/console/saml-connection-fields";
import { Csrf, Notice } from "~/components/console/ui";
import { IdentityProviderCreateSchema } from "~/schemas/identity-provider";

/** The organization console's page (decision 090): the service console's, bound to the signed-in administrator's organization through its door. */
export const headers = consoleHeaders;
export const meta: MetaFunction = () => [{ title: "Identity providers · Porta" }];

/** An organization's upstream identity providers (decision 046): the list and a new one. */
export async function loader(args: LoaderFunctionArgs) {
  const console = await requireOrganizationConsole(args);
  const orgId = console.organizationId;
  const [org, providers] = await Promise.all([
    console.admin("organizations.get", { params: { id: orgId } }),
    console.admin("identityProviders.list", { query: { organizationId: orgId, limit: "100" } }),
  ]);
  if (!org.ok) throw data({ message: org.error.code }, { status: org.status === 422 ? 404 : org.status });
  return data({ org: org.body, providers: providers.ok ? providers.body.data : [], done: new URL(args.request.url).searchParams.get("done") }, { headers: NO_STORE });
}

export async function action(args: ActionFunctionArgs) {
  const { console, form } = await requireOrganizationConsoleForm(args);
  const orgId = console.organizationId;
  const input = identityProviderInput(form, { organizationId: orgId });
  // A SAML connection (decision 081): its settings' source and attribute names instead of client ID and scopes.
  const parsed = IdentityProviderCreateSchema.safeParse(text(form, "kind") === "saml" ? { ...input, clientId: undefined, ...samlCreateInput(form) } : input);
  if (!parsed.success) return data({ errors: zodFieldErrors(parsed.error) }, { status: 422, headers: NO_STORE });
  const created = await console.admin("identityProviders.create", { body: parsed.data });
  if (!created.ok) return data({ errors: created.error.details ? detailErrors(created.error.details, [...IDENTITY_PROVIDER_FIELDS, ...SAML_FIELDS], SAML_ERROR_FIELDS) : { form: created.error.message } }, { status: created.status, headers: NO_STORE });
  return redirect(`/${console.slug}/console/identity-providers/${created.body.id}?done=created`);
}

export default function IdentityProviders() {
  const { slug } = useParams();
  const { providers, done } = useLoaderData<typeof loader>();
  const result = useActionData<typeof action>();
  const { t } = useTranslation("console");
  const errors: Record<string, string> = result?.errors ?? {};
  return (
    <>
      <h1>{t("idp.title")}</h1>
      <p className="muted">{t("idp.intro")}</p>
      {done === "deleted" ? <Notice kind="info">{t("idp.deleted")}</Notice> : null}
      <ListTable
        rows={providers}
        rowKey={(p) => p.id}
        empty={t("idp.empty")}
        caption={t("idp.title")}
        columns={[
          { header: t("idp.name"), cell: (p) => <Link to={`/${slug}/console/identity-providers/${p.id}`}>{p.name}</Link> },
          { header: t("idp.kindLabel"), cell: (p) => t(`idp.kind.${p.kind}`) },
          { header: t("idp.domains"), cell: (p) => p.domains.join(", ") },
          { header: t("idp.status"), cell: (p) => (p.enabled ? t("idp.enabled") : t("idp.disabled")) },
        ]}
      />
      <Form method="post" reloadDocument noValidate className="panel form" aria-labelledby="new-idp-title">
        <h2 id="new-idp-title">{t("idp.new")}</h2>
        {errors.form ? <Notice kind="error">{errors.form}</Notice> : null}
        <Csrf />
        <IdentityProviderFields provider={null} errors={errors} />
        <SamlCreateFields errors={errors} />
        <button type="submit" className="button button-inline">{t("idp.create")}</button>
      </Form>
    </>
  );
}
