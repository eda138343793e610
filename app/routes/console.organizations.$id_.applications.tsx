import { data, redirect, type ActionFunctionArgs, type LoaderFunctionArgs, type MetaFunction } from "@remix-run/node";
import { Form, Link, useActionData, useLoaderData, useLocation } from "@remix-run/react";
import { useState, type FormEvent } from "react";
import { useTranslation } from "react-i18next";
import { consoleHeaders, NO_STORE, requireConsole, requireConsoleForm } from "~/.server/console/page";
import { ListTable } from "~/components/console/list-table";
import { detailErrors, text, zodFieldErrors } from "~/components/console/forms";
import { ActionMenu, ConfirmAction, Csrf, CursorPager, Notice, TextField } from "~/components/console/ui";
import { ApplicationCreateSchema } from "~/schemas/application";

export const headers = consoleHeaders;
export const meta: MetaFunction = () => [{ title: "Applications · Porta console" }];

export async function loader(args: LoaderFunctionArgs) {
  const console = await requireConsole(args);
  const orgId = args.params.id!;
  const search = new URL(args.request.url).searchParams;
  const [org, apps] = await Promise.all([
    console.admin("organizations.get", { params: { id: orgId } }),
    console.admin("applications.list", { query: { organizationId: orgId, cursor: search.get("cursor") ?? undefined, limit: "20", sort: "name" } }),
  ]);
  if (!org.ok) throw data({ message: org.error.code }, { status: org.status === 422 ? 404 : org.status });
  return data({ org: org.body, page: apps.ok ? apps.body : null, error: apps.ok ? null : apps.error.message, done: search.get("done") }, { headers: NO_STORE });
}

function createInput(form: FormData, organizationId: string) {
  const description = text(form, "description")?.trim();
  return { organizationId, name: text(form, "name") ?? "", ...(description ? { description } : {}) };
}

const SHOWN = ["name", "description"];

export async function action(args: ActionFunctionArgs) {
  const { console, form } = await requireConsoleForm(args);
  const orgId = args.params.id!;
  const intent = form.get("intent");
  if (intent === "activate" || intent === "deactivate") {
    const result = await console.admin(`applications.${intent}`, { params: { id: String(form.get("applicationId") ?? "") } });
    if (!result.ok) return data({ values: null, errors: { form: result.error.message } }, { status: result.status, headers: NO_STORE });
    return redirect(`/console/organizations/${orgId}/applications?done=${intent}`);
  }
  const input = createInput(form, orgId);
  const parsed = ApplicationCreateSchema.safeParse(input);
  if (!parsed.success) return data({ values: input, errors: zodFieldErrors(parsed.error) }, { status: 422, headers: NO_STORE });
  const created = await console.admin("applications.create", { body: parsed.data });
  if (!created.ok) {
    const errors = created.error.details ? detailErrors(created.error.details, SHOWN) : { form: created.error.message };
    return data({ values: input, errors }, { status: created.status, headers: NO_STORE });
  }
  return redirect(`/console/organizations/${orgId}/applications?done=created`);
}

export default function Applications() {
  const { org, page, error, done } = useLoaderData<typeof loader>();
  const result = useActionData<typeof action>();
  const { search } = useLocation();
  const { t } = useTranslation("console");
  const [clientErrors, setClientErrors] = useState<Record<string, string> | null>(null);
  const errors: Record<string, string> = clientErrors ?? result?.errors ?? {};
  const values = result?.values;

  function onSubmit(event: FormEvent<HTMLFormElement>) {
    const parsed = ApplicationCreateSchema.safeParse(createInput(new FormData(event.currentTarget), org.id));
    if (parsed.success) return setClientErrors(null);
    event.preventDefault();
    setClientErrors(zodFieldErrors(parsed.error));
  }

  return (
    <>
      <p className="breadcrumb"><Link to={`/console/organizations/${org.id}`}>{org.name}</Link></p>
      <h1>{t("apps.title")}</h1>
      <p className="muted">{t("apps.explain")}</p>
      {done ? <Notice kind="info">{done === "deleted" ? t("appDetail.deleted") : t(`apps.done.${done}`)}</Notice> : null}
      {error ? <Notice kind="error">{error}</Notice> : null}
      {page ? (
        <>
          <ListTable
            rows={page.data}
            rowKey={(a) => a.id}
            empty={t("empty.applications")}
            columns={[
              { header: t("common.name"), cell: (a) => <Link to={`/console/organizations/${org.id}/applications/${a.id}`}>{a.name}</Link> },
              { header: t("apps.description"), cell: (a) => a.description ?? "" },
              { header: t("common.status"), cell: (a) => t(`users.status.${a.status}`) },
              {
                header: t("common.actions"),
                cell: (a) => (
                  <ActionMenu name={a.name}>
                    {a.status === "active" ? (
                      <ConfirmAction intent="deactivate" label={t("users.deactivate")} question={t("apps.confirmDeactivate", { name: a.name })} fields={{ applicationId: a.id }} />
                    ) : (
                      <ConfirmAction intent="activate" label={t("users.activate")} question={t("apps.confirmActivate", { name: a.name })} fields={{ applicationId: a.id }} />
                    )}
                  </ActionMenu>
                ),
              },
            ]}
          />
          <CursorPager search={search} cursor={page.cursor} />
        </>
      ) : null}
      <Form method="post" reloadDocument noValidate onSubmit={onSubmit} className="panel form" aria-labelledby="new-app-title">
        <h2 id="new-app-title">{t("apps.new")}</h2>
        {errors.form ? <Notice kind="error">{errors.form}</Notice> : null}
        <Csrf />
        <input type="hidden" name="intent" value="create" />
        <TextField name="name" label={t("common.name")} defaultValue={values?.name} error={errors.name} required />
        <TextField name="description" label={t("apps.description")} defaultValue={values?.description} error={errors.description} />
        <button type="submit" className="button button-inline">{t("apps.create")}</button>
      </Form>
    </>
  );
}
