import { data, redirect, type ActionFunctionArgs, type LoaderFunctionArgs, type MetaFunction } from "@remix-run/node";
import { Form, Link, useActionData, useLoaderData, useParams } from "@remix-run/react";
import { useTranslation } from "react-i18next";
import { consoleHeaders, NO_STORE } from "~/.server/console/page";
import { requireOrganizationConsole, requireOrganizationConsoleForm } from "~/.server/console/organization-console";
import { detailErrors, text, zodFieldErrors } from "~/components/console/forms";
import { IDENTITY_PROVIDER_FIELDS, IdentityProviderFields, identityProviderInput } from "~/components/console/identity-provider-fields";
import { SAML_ERROR_FIELDS, SAML_FIELDS, SamlServiceProviderValues, SamlSettingsFields, samlUpdateInput } from "~/components/console/saml-connection-fields";
import { ConfirmAction, CopyButton, Csrf, Notice } from "~/components/console/ui";
import { IdentityProviderUpdateSchema } from "~/schemas/identity-provider";

/** The organization console's page (decision 090): the service console's, bound to the signed-in administrator's organization through its door. */
export const headers = consoleHeaders;
export const meta: MetaFunction = () => [{ title: "Identity provider · Porta" }];

/** One upstream identity provider: its callback address to register upstream, its settings, and deleting it. */
export async function loader(args: LoaderFunctionArgs) {
  const console = await requireOrganizationConsole(args);
  const provider = await console.admin("identityProviders.get", { params: { id: args.params.providerId! } });
  if (!provider.ok || provider.body.organizationId !== console.organizationId) throw data({ message: "not found" }, { status: 404 });
  // A SAML connection's IdP-initiated sign-in picks one of the organization's clients.
  const clients = provider.body.kind === "saml" ? await console.admin("clients.list", { query: { organizationId: console.organizationId, limit: "100", sort: "name" } }) : null;
  // Claimed domains the organization has not verified (decision 086): discovery follows them, linking by assumed email does not.
  const domains = provider.body.domains.length > 0 ? await console.admin("domains.list", { params: { orgId: console.organizationId } }) : null;
  const verified = new Set(domains?.ok ? domains.body.data.filter((d) => d.status === "verified").map((d) => d.domain) : []);
  const unverifiedDomains = provider.body.domains.filter((d) => !verified.has(d));
  return data(
    { provider: provider.body, version: provider.version ?? null, clients: clients?.ok ? clients.body.data.map((c) => ({ id: c.id, name: c.name })) : [], unverifiedDomains, done: new URL(args.request.url).searchParams.get("done") },
    { headers: NO_STORE },
  );
}

export async function action(args: ActionFunctionArgs) {
  const { console, form } = await requireOrganizationConsoleForm(args);
  const orgId = console.organizationId;
  const id = args.params.providerId!;
  const current = await console.admin("identityProviders.get", { params: { id } });
  if (!current.ok || current.body.organizationId !== orgId) throw data({ message: "not found" }, { status: 404 });
  if (form.get("intent") === "delete") {
    const deleted = await console.admin("identityProviders.delete", { params: { id } });
    if (!deleted.ok) return data({ errors: { form: deleted.error.message } as Record<string, string> }, { status: deleted.status, headers: NO_STORE });
    return redirect(`/${console.slug}/console/identity-providers?done=deleted`);
  }
  if (form.get("intent") === "refreshMetadata") {
    const refreshed = await console.admin("identityProviders.refreshSamlMetadata", { params: { id } });
    if (!refreshed.ok) return data({ errors: { form: refreshed.error.details?.map((d) => `${d.field}: ${d.message}`).join("; ") ?? refreshed.error.message } as Record<string, string> }, { status: refreshed.status, headers: NO_STORE });
    return redirect(`/${console.slug}/console/identity-providers/${id}?done=refreshed`);
  }
  const parsed = IdentityProviderUpdateSchema.safeParse(current.body.kind === "saml" ? samlUpdateInput(form) : identityProviderInput(form, null));
  if (!parsed.success) return data({ errors: zodFieldErrors(parsed.error) }, { status: 422, headers: NO_STORE });
  const ifMatch = /^\d{1,10}$/.test(text(form, "version") ?? "") ? Number(text(form, "version")) : undefined;
  const updated = await console.admin("identityProviders.update", { params: { id }, body: parsed.data, ...(ifMatch ? { ifMatch } : {}) });
  if (!updated.ok) {
    // The group roles as typed: the error names a line of them.
    const posted = { groupRoles: text(form, "groupRoles") ?? "" };
    return data({ errors: updated.error.details ? detailErrors(updated.error.details, [...IDENTITY_PROVIDER_FIELDS, ...SAML_FIELDS], SAML_ERROR_FIELDS) : { form: updated.error.message }, posted }, { status: updated.status, headers: NO_STORE });
  }
  return redirect(`/${console.slug}/console/identity-providers/${id}?done=saved`);
}

/** The group roles a refused update carried, when it did. */
function postedGroupRoles(result: unknown): string | undefined {
  if (typeof result !== "object" || result === null || !("posted" in result)) return undefined;
  const posted = result.posted;
  return typeof posted === "object" && posted !== null && "groupRoles" in posted && typeof posted.groupRoles === "string" ? posted.groupRoles : undefined;
}

export default function IdentityProviderPage() {
  const { slug } = useParams();
  const { provider, version, clients, unverifiedDomains, done } = useLoaderData<typeof loader>();
  const result = useActionData<typeof action>();
  const { t } = useTranslation("console");
  const errors: Record<string, string> = result?.errors ?? {};
  return (
    <>
      <p className="breadcrumb"><Link to={`/${slug}/console/identity-providers`}>{t("idp.title")}</Link></p>
      <h1>{provider.name}</h1>
      {done ? <Notice kind="info">{t(done === "created" ? "idp.created" : done === "refreshed" ? "idp.saml.refreshed" : "idp.saved")}</Notice> : null}
      {provider.saml ? (
        <SamlServiceProviderValues saml={provider.saml} provider={provider} />
      ) : (
        <section className="panel" aria-labelledby="callback-title">
          <h2 id="callback-title">{t("idp.callback")}</h2>
          <p>{t("idp.callbackHint")}</p>
          <p><code>{provider.callbackUrl}</code> <CopyButton value={provider.callbackUrl} label={t("idp.copyCallback")} /></p>
        </section>
      )}
      {unverifiedDomains.length > 0 ? (
        <Notice kind="info">
          {t("idp.unverifiedDomains", { domains: unverifiedDomains.join(", ") })}{" "}
          <Link to={`/${slug}/console/domains`}>{t("orgs.domains")}</Link>
        </Notice>
      ) : null}
      {provider.saml?.metadataUrl ? (
        <Form method="post" reloadDocument className="panel">
          <Csrf />
          <input type="hidden" name="intent" value="refreshMetadata" />
          <button type="submit" className="button button-inline">{t("idp.saml.refresh")}</button>
        </Form>
      ) : null}
      {provider.jwksUrl ? (
        <section className="panel" aria-labelledby="jwks-title">
          <h2 id="jwks-title">{t("idp.jwks")}</h2>
          <p>{t("idp.jwksHint")}</p>
          <p><code>{provider.jwksUrl}</code> <CopyButton value={provider.jwksUrl} label={t("idp.copyJwks")} /></p>
        </section>
      ) : null}
      <Form method="post" reloadDocument noValidate className="panel form" aria-labelledby="edit-idp-title">
        <h2 id="edit-idp-title">{t("idp.edit")}</h2>
        {errors.form ? <Notice kind="error">{errors.form}</Notice> : null}
        <Csrf />
        {version !== null ? <input type="hidden" name="version" value={version} /> : null}
        <IdentityProviderFields provider={provider} errors={errors} />
        {provider.saml ? <SamlSettingsFields provider={provider} saml={provider.saml} clients={clients} errors={errors} postedGroupRoles={postedGroupRoles(result)} /> : null}
        <button type="submit" className="button button-inline">{t("idp.save")}</button>
      </Form>
      <section className="panel" aria-labelledby="delete-idp-title">
        <h2 id="delete-idp-title">{t("idp.delete")}</h2>
        <ConfirmAction intent="delete" label={t("idp.delete")} question={t("idp.confirmDelete", { name: provider.name })} danger />
      </section>
    </>
  );
}
