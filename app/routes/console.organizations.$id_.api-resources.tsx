import { data, redirect, type ActionFunctionArgs, type LoaderFunctionArgs, type MetaFunction } from "@remix-run/node";
import { Link, useActionData, useLoaderData } from "@remix-run/react";
import { useTranslation } from "react-i18next";
import { consoleHeaders, NO_STORE, requireConsole, requireConsoleForm } from "~/.server/console/page";
import { API_RESOURCE_FIELDS, ApiResourceForm, apiResourceBody, apiResourceValues, type ApiResourceFormValues } from "~/components/console/api-resource-fields";
import { detailErrors, zodFieldErrors } from "~/components/console/forms";
import { ListTable } from "~/components/console/list-table";
import { ActionMenu, ConfirmAction, Notice } from "~/components/console/ui";
import { ApiResourceCreateSchema } from "~/schemas/api-resource";

export const headers = consoleHeaders;
export const meta: MetaFunction = () => [{ title: "API resources · Porta console" }];

/** An organization's API resources (decision 077): the list, a new one, delete behind a confirmation. */
export async function loader(args: LoaderFunctionArgs) {
  const console = await requireConsole(args);
  const orgId = args.params.id!;
  const [org, resources] = await Promise.all([
    console.admin("organizations.get", { params: { id: orgId } }),
    console.admin("apiResources.list", { params: { orgId }, query: { limit: "100" } }),
  ]);
  if (!org.ok) throw data({ message: org.error.code }, { status: org.status === 422 ? 404 : org.status });
  const done = new URL(args.request.url).searchParams.get("done");
  return data({ org: org.body, resources: resources.ok ? resources.body.data : [], error: resources.ok ? null : resources.error.message, done }, { headers: NO_STORE });
}

type ActionResult = { kind: "invalid"; values: ApiResourceFormValues; errors: Record<string, string> } | { kind: "rowFailed"; message: string };
const reply = (result: ActionResult, status: number) => data<ActionResult>(result, { status, headers: NO_STORE });

export async function action(args: ActionFunctionArgs) {
  const { console, form } = await requireConsoleForm(args);
  const orgId = args.params.id!;
  const intent = String(form.get("intent") ?? "");
  if (intent === "delete") {
    const id = String(form.get("resourceId") ?? "");
    const owned = await console.admin("apiResources.get", { params: { id } });
    // A resource of another organization is not found here (the address names this organization).
    if (!owned.ok || owned.body.organizationId !== orgId) return reply({ kind: "rowFailed", message: "not found" }, 404);
    const result = await console.admin("apiResources.delete", { params: { id } });
    if (!result.ok) return reply({ kind: "rowFailed", message: result.error.message }, result.status);
    return redirect(`/console/organizations/${orgId}/api-resources?done=deleted`);
  }
  if (intent !== "create") return reply({ kind: "rowFailed", message: "unknown action" }, 400);
  const values = apiResourceValues(form);
  const parsed = ApiResourceCreateSchema.safeParse(apiResourceBody(values));
  if (!parsed.success) return reply({ kind: "invalid", values, errors: zodFieldErrors(parsed.error) }, 422);
  const created = await console.admin("apiResources.create", { params: { orgId }, body: parsed.data });
  if (!created.ok) {
    const errors = created.error.details ? detailErrors(created.error.details, API_RESOURCE_FIELDS) : { form: created.error.message };
    return reply({ kind: "invalid", values, errors }, created.status);
  }
  return redirect(`/console/organizations/${orgId}/api-resources/${created.body.id}?done=created`);
}

export default function ApiResources() {
  const { org, resources, error, done } = useLoaderData<typeof loader>();
  const result = useActionData<typeof action>();
  const { t } = useTranslation("console");
  return (
    <>
      <p className="breadcrumb"><Link to={`/console/organizations/${org.id}`}>{org.name}</Link></p>
      <h1>{t("apiResources.title")}</h1>
      <p className="muted">{t("apiResources.intro")}</p>
      {done ? <Notice kind="info">{t(`apiResources.done.${done}`)}</Notice> : null}
      {error ? <Notice kind="error">{error}</Notice> : null}
      {result?.kind === "rowFailed" ? <Notice kind="error">{result.message}</Notice> : null}
      <ListTable
        rows={resources}
        rowKey={(r) => r.id}
        empty={t("apiResources.empty")}
        columns={[
          { header: t("common.name"), cell: (r) => <Link to={`/console/organizations/${org.id}/api-resources/${r.id}`}>{r.name}</Link> },
          { header: t("apiResources.identifier"), cell: (r) => <code>{r.identifier}</code> },
          { header: t("apiResources.scopes"), cell: (r) => r.scopes.join(" ") },
          { header: t("common.status"), cell: (r) => (r.status === "active" ? t("apiResources.active") : t("apiResources.inactive")) },
          {
            header: t("common.actions"),
            cell: (r) => (
              <ActionMenu name={r.name}>
                <Link to={`/console/organizations/${org.id}/api-resources/${r.id}`}>{t("apiResources.edit")}</Link>
                <ConfirmAction intent="delete" danger label={t("apiResources.delete")} question={t("apiResources.confirmDelete", { name: r.name, identifier: r.identifier })} fields={{ resourceId: r.id }} />
              </ActionMenu>
            ),
          },
        ]}
      />
      <ApiResourceForm
        intent="create"
        titleId="new-api-resource-title"
        title={t("apiResources.new")}
        submit={t("apiResources.create")}
        values={result?.kind === "invalid" ? result.values : undefined}
        errors={result?.kind === "invalid" ? result.errors : {}}
      />
    </>
  );
}
