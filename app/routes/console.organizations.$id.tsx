import { data, redirect, type ActionFunctionArgs, type LoaderFunctionArgs, type MetaFunction } from "@remix-run/node";
import { Form, Link, useActionData, useLoaderData, useLocation } from "@remix-run/react";
import { useState, type FormEvent } from "react";
import { useTranslation } from "react-i18next";
import { consoleHeaders, NO_STORE, requireConsole, requireConsoleForm } from "~/.server/console/page";
import { organizationEndpoints } from "~/.server/oidc/edge/endpoints";
import { ConflictView } from "~/components/console/detail-parts";
import { detailErrors, ORGANIZATION_FIELDS, organizationFields, zodFieldErrors } from "~/components/console/forms";
import { HistorySection, historyQuery } from "~/components/console/history";
import { EndpointsPanel } from "~/components/console/integration";
import { OrganizationFields } from "~/components/console/organization-fields";
import { OrganizationStatsPanel } from "~/components/console/organization-stats";
import { ConfirmAction, Csrf, Notice, SectionNav, TextField } from "~/components/console/ui";
import { OrganizationUpdateSchema, type Organization } from "~/schemas/organization";

export const headers = consoleHeaders;
export const meta: MetaFunction = () => [{ title: "Organization · Porta console" }];

export async function loader(args: LoaderFunctionArgs) {
  const console = await requireConsole(args);
  const id = args.params.id!;
  const [result, stats, history] = await Promise.all([
    console.admin("organizations.get", { params: { id } }),
    console.admin("stats.getOrganizationStats", { params: { orgId: id } }),
    console.admin("organizations.getHistory", { params: { id }, query: historyQuery(args.request.url) }),
  ]);
  if (!result.ok) throw data({ message: result.error.code }, { status: result.status === 422 ? 404 : result.status });
  const notice = new URL(args.request.url).searchParams.get("done");
  const endpoints = organizationEndpoints(args.context.services.config.baseUrl, result.body.slug);
  return data(
    { organization: result.body, version: result.version!, notice, endpoints, stats: stats.ok ? stats.body : null, history: history.ok ? history.body : null },
    { headers: NO_STORE },
  );
}

type Values = ReturnType<typeof organizationFields>;
type ActionResult =
  | { kind: "invalid"; values: Values; errors: Record<string, string> }
  | { kind: "conflict"; values: Values; current: Organization; currentVersion: number }
  | { kind: "failed"; message: string };

export async function action(args: ActionFunctionArgs) {
  const { console, form } = await requireConsoleForm(args);
  const id = args.params.id!;
  const intent = form.get("intent");
  if (intent === "suspend" || intent === "activate" || intent === "delete") {
    const operationId = intent === "delete" ? "organizations.delete" : intent === "suspend" ? "organizations.suspend" : "organizations.activate";
    const result = await console.admin(operationId, { params: { id } });
    if (!result.ok) return data<ActionResult>({ kind: "failed", message: result.error.message }, { status: result.status, headers: NO_STORE });
    return redirect(intent === "delete" ? "/console/organizations" : `/console/organizations/${id}?done=${intent}`);
  }
  const values = organizationFields(form);
  const parsed = OrganizationUpdateSchema.safeParse(values);
  if (!parsed.success) return data<ActionResult>({ kind: "invalid", values, errors: zodFieldErrors(parsed.error) }, { status: 422, headers: NO_STORE });
  const version = Number(form.get("version"));
  const result = await console.admin("organizations.update", { params: { id }, body: parsed.data, ifMatch: Number.isSafeInteger(version) ? version : undefined });
  if (result.ok) return redirect(`/console/organizations/${id}?done=saved`);
  if (result.status === 409 && result.error.code === "etag_mismatch") {
    // Never overwrite: show what is saved now beside what this person typed.
    const current = await console.admin("organizations.get", { params: { id } });
    if (current.ok) return data<ActionResult>({ kind: "conflict", values, current: current.body, currentVersion: current.version! }, { status: 409, headers: NO_STORE });
  }
  if (result.status === 422) return data<ActionResult>({ kind: "invalid", values, errors: detailErrors(result.error.details, ORGANIZATION_FIELDS) }, { status: 422, headers: NO_STORE });
  return data<ActionResult>({ kind: "failed", message: result.error.message }, { status: result.status, headers: NO_STORE });
}

function OrganizationConflict({ current, values }: { current: Organization; values: Values }) {
  const { t } = useTranslation("console");
  const methods = (list: readonly string[]) => list.map((m) => t(`orgs.method.${m}`)).join(", ");
  const rows = [
    { field: t("common.name"), now: current.name, yours: values.name ?? "" },
    { field: t("orgs.loginMethods"), now: methods(current.defaultLoginMethods), yours: methods(values.defaultLoginMethods) },
    { field: t("orgs.twoFactor"), now: t(`orgs.policy.${current.twoFactorPolicy}`), yours: values.twoFactorPolicy ? t(`orgs.policy.${values.twoFactorPolicy}`) : "" },
    { field: t("orgs.locale"), now: current.defaultLocale, yours: values.defaultLocale ?? "" },
  ];
  return (
    <ConflictView text={t("orgs.conflict.text")} rows={rows} />
  );
}

export default function OrganizationPage() {
  const { organization: org, version, notice, endpoints, stats, history } = useLoaderData<typeof loader>();
  const result = useActionData<typeof action>();
  const { t } = useTranslation("console");
  const [clientErrors, setClientErrors] = useState<Record<string, string> | null>(null);
  const errors = clientErrors ?? (result?.kind === "invalid" ? result.errors : {});
  const values = result && result.kind !== "failed" ? result.values : null;

  function onSubmit(event: FormEvent<HTMLFormElement>) {
    const parsed = OrganizationUpdateSchema.safeParse(organizationFields(new FormData(event.currentTarget)));
    if (parsed.success) return setClientErrors(null);
    event.preventDefault();
    setClientErrors(zodFieldErrors(parsed.error));
  }

  return (
    <>
      <h1>{org.name}</h1>
      <p className="muted">
        <code>{org.slug}</code> · {t(`status.${org.status}`)}
      </p>
      <nav aria-label={org.name} className="subnav">
        <Link to={`/console/organizations/${org.id}/users`}>{t("orgs.users")}</Link>
        <Link to={`/console/organizations/${org.id}/applications`}>{t("orgs.applications")}</Link>
        <Link to={`/console/organizations/${org.id}/clients`}>{t("orgs.clients")}</Link>
        <Link to={`/console/organizations/${org.id}/roles`}>{t("orgs.roles")}</Link>
        <Link to={`/console/organizations/${org.id}/api-resources`}>{t("orgs.apiResources")}</Link>
        <Link to={`/console/organizations/${org.id}/identity-providers`}>{t("orgs.identityProviders")}</Link>
        <Link to={`/console/organizations/${org.id}/domains`}>{t("orgs.domains")}</Link>
        <Link to={`/console/organizations/${org.id}/branding`}>{t("orgs.branding")}</Link>
        <Link to={`/console/organizations/${org.id}/bulk`}>{t("orgs.bulk")}</Link>
        <Link to={`/console/organizations/${org.id}/user-imports`}>{t("orgs.userImports")}</Link>
        <Link to={`/console/organizations/${org.id}/keys`}>{t("orgs.keys")}</Link>
        <Link to={`/console/organizations/${org.id}/registration`}>{t("orgs.registration")}</Link>
        <Link to={`/console/organizations/${org.id}/scim`}>{t("orgs.scim")}</Link>
        <Link to={`/console/organizations/${org.id}/setup-links`}>{t("orgs.setupLinks")}</Link>
        <Link to={`/console/organizations/${org.id}/webhooks`}>{t("orgs.webhooks")}</Link>
        <Link to={`/console/organizations/${org.id}/audit-sinks`}>{t("orgs.auditSinks")}</Link>
        <a href={`/console/organizations/${org.id}/export`} download>{t("orgs.export")}</a>
      </nav>
      <SectionNav
        sections={[
          { id: "integration-title", label: t("integration.title") },
          { id: "edit-title", label: t("orgs.edit") },
          { id: "org-actions", label: t("common.actions") },
          stats ? { id: "org-stats-title", label: t("orgStats.title") } : null,
          { id: "history-title", label: t("history.title") },
        ]}
      />
      {notice === "saved" ? <Notice kind="info">{t("common.saved")}</Notice> : null}
      {notice === "suspend" ? <Notice kind="info">{t("orgs.suspended")}</Notice> : null}
      {notice === "activate" ? <Notice kind="info">{t("orgs.activated")}</Notice> : null}
      {new URLSearchParams(useLocation().search).has("created") ? <Notice kind="info">{t("orgs.created")}</Notice> : null}
      {result?.kind === "failed" ? <Notice kind="error">{result.message}</Notice> : null}
      <EndpointsPanel endpoints={endpoints} />
      {result?.kind === "conflict" ? (
        <OrganizationConflict current={result.current} values={result.values} />
      ) : (
        <Form method="post" reloadDocument noValidate onSubmit={onSubmit} className="panel form" aria-labelledby="edit-title">
          <h2 id="edit-title">{t("orgs.edit")}</h2>
          {errors.form ? <Notice kind="error">{errors.form}</Notice> : null}
          <Csrf />
          <input type="hidden" name="intent" value="update" />
          <input type="hidden" name="version" value={version} />
          <TextField name="name" label={t("common.name")} defaultValue={values?.name ?? org.name} error={errors.name} required />
          <OrganizationFields
            values={{
              defaultLoginMethods: values?.defaultLoginMethods ?? org.defaultLoginMethods,
              twoFactorPolicy: values?.twoFactorPolicy ?? org.twoFactorPolicy,
              defaultLocale: values?.defaultLocale ?? org.defaultLocale,
              oauth21: values?.oauth21 ?? org.oauth21,
              botChallenge: values?.botChallenge ?? org.botChallenge,
              botChallengeCost: values?.botChallengeCost ?? org.botChallengeCost,
            }}
            errors={errors}
          />
          <button type="submit" className="button button-inline">{t("common.save")}</button>
        </Form>
      )}
      <section className="panel actions-panel" aria-label={t("common.actions")} id="org-actions">
        {org.status === "active" ? (
          <ConfirmAction intent="suspend" label={t("orgs.suspend")} question={t("orgs.confirmSuspend", { name: org.name })} />
        ) : (
          <ConfirmAction intent="activate" label={t("orgs.activate")} question={t("orgs.activate")} />
        )}
        <ConfirmAction intent="delete" label={t("orgs.delete")} question={t("orgs.confirmDelete", { name: org.name })} danger />
      </section>
      {stats ? <OrganizationStatsPanel stats={stats} usersHref={`/console/organizations/${org.id}/users`} /> : null}
      <HistorySection page={history} targetId={org.id} />
    </>
  );
}
