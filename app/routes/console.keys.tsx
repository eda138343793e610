import { data, redirect, type ActionFunctionArgs, type LoaderFunctionArgs, type MetaFunction } from "@remix-run/node";
import { Form, Link, useActionData, useLoaderData, useLocation } from "@remix-run/react";
import { useTranslation } from "react-i18next";
import { consoleHeaders, NO_STORE, requireConsole, requireConsoleForm } from "~/.server/console/page";
import { ListTable, Moment } from "~/components/console/list-table";
import { ConfirmAction, CursorPager, Notice, TextField } from "~/components/console/ui";

export const headers = consoleHeaders;
export const meta: MetaFunction = () => [{ title: "Signing keys · Porta console" }];

/** Every organization's keys (newest first, filtered by organization) and the operators' rotation of all. */
export async function loader(args: LoaderFunctionArgs) {
  const console = await requireConsole(args);
  const search = new URL(args.request.url).searchParams;
  const organizationId = search.get("organizationId")?.trim() ?? "";
  const rotatedAll = search.get("rotatedAll");
  const result = await console.admin("keys.list", {
    query: { organizationId: organizationId || undefined, cursor: search.get("cursor") ?? undefined, limit: "50" },
  });
  if (!result.ok) {
    const field = result.error.details?.find((d) => d.field === "query.organizationId");
    const errors = field ? { organizationId: field.message } : { form: result.error.message };
    return data({ organizationId, page: null, rotatedAll, errors }, { status: result.status, headers: NO_STORE });
  }
  return data({ organizationId, page: result.body, rotatedAll, errors: {} as Record<string, string> }, { headers: NO_STORE });
}

export async function action(args: ActionFunctionArgs) {
  const { console, form } = await requireConsoleForm(args);
  if (form.get("intent") !== "rotate-all") return data({ message: "unknown action" }, { status: 400, headers: NO_STORE });
  const result = await console.admin("keys.rotateAll", { body: {} });
  if (!result.ok) return data({ message: result.error.message }, { status: result.status, headers: NO_STORE });
  return redirect(`/console/keys?rotatedAll=${result.body.rotatedOrganizations}`);
}

export default function Keys() {
  const { organizationId, page, rotatedAll, errors } = useLoaderData<typeof loader>();
  const failed = useActionData<typeof action>();
  const { search } = useLocation();
  const { t } = useTranslation("console");
  return (
    <>
      <h1>{t("keys.title")}</h1>
      <p className="muted">{t("keys.intro")}</p>
      {rotatedAll ? <Notice kind="info">{t("keys.rotatedAll", { count: Number(rotatedAll) })}</Notice> : null}
      {failed ? <Notice kind="error">{failed.message}</Notice> : null}
      <Form method="get" className="panel filters" aria-labelledby="filters-title">
        <h2 id="filters-title">{t("keys.filters")}</h2>
        <TextField name="organizationId" label={t("keys.organizationId")} defaultValue={organizationId} error={errors.organizationId} />
        <button type="submit" className="button button-inline">{t("keys.apply")}</button>
      </Form>
      {errors.form ? <Notice kind="error">{errors.form}</Notice> : null}
      {page ? (
        <>
          <ListTable
            rows={page.data}
            rowKey={(k) => k.kid}
            columns={[
              { header: t("keys.kid"), cell: (k) => <code>{k.kid}</code> },
              {
                header: t("keys.organization"),
                cell: (k) =>
                  k.organizationId ? (
                    <Link to={`/console/organizations/${k.organizationId}/keys`}>
                      <code>{k.organizationId}</code>
                    </Link>
                  ) : (
                    t("keys.shared")
                  ),
              },
              { header: t("common.status"), cell: (k) => k.status },
              { header: t("common.created"), cell: (k) => <Moment iso={k.createdAt} /> },
              { header: t("keys.retireAfter"), cell: (k) => <Moment iso={k.retireAfter} /> },
            ]}
          />
          <CursorPager search={search} cursor={page.cursor} />
        </>
      ) : null}
      <section className="panel actions-panel" aria-label={t("common.actions")}>
        <ConfirmAction intent="rotate-all" label={t("keys.rotateAll")} question={t("keys.confirmRotateAll")} danger />
      </section>
    </>
  );
}
