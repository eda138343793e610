import { data, redirect, type ActionFunctionArgs, type LoaderFunctionArgs, type MetaFunction } from "@remix-run/node";
import { Link, useActionData, useLoaderData } from "@remix-run/react";
import { useTranslation } from "react-i18next";
import { consoleHeaders, NO_STORE, requireConsole, requireConsoleForm } from "~/.server/console/page";
import { API_RESOURCE_FIELDS, ApiResourceForm, apiResourceBody, apiResourceValues, valuesOf, type ApiResourceFormValues } from "~/components/console/api-resource-fields";
import { detailErrors, zodFieldErrors } from "~/components/console/forms";
import { ConfirmAction, Notice } from "~/components/console/ui";
import { ApiResourceUpdateSchema } from "~/schemas/api-resource";

export const headers = consoleHeaders;
export const meta: MetaFunction = () => [{ title: "API resource · Porta console" }];

const notFound = () => data({ message: "not_found" }, { status: 404, headers: NO_STORE });

/** One API resource (decision 077): edit it (If-Match on the version the page showed), delete it. */
export async function loader(args: LoaderFunctionArgs) {
  const console = await requireConsole(args);
  const orgId = args.params.id!;
  const [org, resource] = await Promise.all([console.admin("organizations.get", { params: { id: orgId } }), console.admin("apiResources.get", { params: { id: args.params.resourceId! } })]);
  if (!org.ok) throw data({ message: org.error.code }, { status: org.status === 422 ? 404 : org.status });
  // A resource of another organization is not found here (the address names this organization).
  if (!resource.ok || resource.body.organizationId !== orgId) throw notFound();
  return data({ org: org.body, resource: resource.body, version: resource.version!, done: new URL(args.request.url).searchParams.get("done") }, { headers: NO_STORE });
}

type ActionResult =
  | { kind: "invalid"; values: ApiResourceFormValues; errors: Record<string, string> }
  | { kind: "conflict"; values: ApiResourceFormValues }
  | { kind: "failed"; message: string };
const reply = (result: ActionResult, status: number) => data<ActionResult>(result, { status, headers: NO_STORE });

export async function action(args: ActionFunctionArgs) {
  const { console, form } = await requireConsoleForm(args);
  const orgId = args.params.id!;
  const id = args.params.resourceId!;
  const owned = await console.admin("apiResources.get", { params: { id } });
  if (!owned.ok || owned.body.organizationId !== orgId) throw notFound();
  const intent = String(form.get("intent") ?? "");
  if (intent === "delete") {
    const result = await console.admin("apiResources.delete", { params: { id } });
    if (!result.ok) return reply({ kind: "failed", message: result.error.message }, result.status);
    return redirect(`/console/organizations/${orgId}/api-resources?done=deleted`);
  }
  if (intent !== "update") return reply({ kind: "failed", message: "unknown action" }, 400);
  const values = apiResourceValues(form);
  const parsed = ApiResourceUpdateSchema.safeParse(apiResourceBody(values));
  if (!parsed.success) return reply({ kind: "invalid", values, errors: zodFieldErrors(parsed.error) }, 422);
  const version = Number(form.get("version"));
  // A page older than the saved resource (or a form without its version) never overwrites it:
  // If-Match names the version the page showed.
  if (!Number.isSafeInteger(version)) return reply({ kind: "conflict", values }, 409);
  const result = await console.admin("apiResources.update", { params: { id }, body: parsed.data, ifMatch: version });
  if (result.ok) return redirect(`/console/organizations/${orgId}/api-resources/${id}?done=saved`);
  if (result.status === 409 && result.error.code === "etag_mismatch") return reply({ kind: "conflict", values }, 409);
  const errors = result.status === 422 && result.error.details ? detailErrors(result.error.details, API_RESOURCE_FIELDS) : { form: result.error.message };
  return reply({ kind: "invalid", values, errors }, result.status);
}

export default function ApiResourcePage() {
  const { org, resource, version, done } = useLoaderData<typeof loader>();
  const result = useActionData<typeof action>();
  const { t } = useTranslation("console");
  const errors = result?.kind === "invalid" ? result.errors : result?.kind === "conflict" ? { form: t("apiResources.conflict") } : {};
  return (
    <>
      <p className="breadcrumb">
        <Link to={`/console/organizations/${org.id}`}>{org.name}</Link> › <Link to={`/console/organizations/${org.id}/api-resources`}>{t("apiResources.title")}</Link>
      </p>
      <h1>{resource.name}</h1>
      <p className="muted">
        <code>{resource.identifier}</code> · {resource.status === "active" ? t("apiResources.active") : t("apiResources.inactive")}
      </p>
      {done ? <Notice kind="info">{t(`apiResources.done.${done}`)}</Notice> : null}
      {result?.kind === "failed" ? <Notice kind="error">{result.message}</Notice> : null}
      <p className="hint">{t("apiResources.rolesHint")}</p>
      <ApiResourceForm
        intent="update"
        titleId="edit-api-resource-title"
        title={t("apiResources.edit")}
        submit={t("common.save")}
        values={result?.kind === "invalid" || result?.kind === "conflict" ? result.values : valuesOf(resource)}
        errors={errors}
        version={version}
      />
      <section className="panel" id="api-resource-actions" aria-label={t("common.actions")}>
        <ConfirmAction intent="delete" danger label={t("apiResources.delete")} question={t("apiResources.confirmDelete", { name: resource.name, identifier: resource.identifier })} />
      </section>
    </>
  );
}
