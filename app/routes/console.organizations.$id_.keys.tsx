import { data, redirect, type ActionFunctionArgs, type LoaderFunctionArgs, type MetaFunction } from "@remix-run/node";
import { Link, useActionData, useLoaderData } from "@remix-run/react";
import { useTranslation } from "react-i18next";
import { consoleHeaders, NO_STORE, requireConsole, requireConsoleForm } from "~/.server/console/page";
import { ListTable, Moment } from "~/components/console/list-table";
import { ConfirmAction, Notice } from "~/components/console/ui";

export const headers = consoleHeaders;
export const meta: MetaFunction = () => [{ title: "Signing keys · Porta console" }];

export async function loader(args: LoaderFunctionArgs) {
  const console = await requireConsole(args);
  const orgId = args.params.id!;
  const [org, keys] = await Promise.all([
    console.admin("organizations.get", { params: { id: orgId } }),
    console.admin("keys.listByOrganization", { params: { orgId } }),
  ]);
  if (!org.ok) throw data({ message: org.error.code }, { status: org.status === 422 ? 404 : org.status });
  const search = new URL(args.request.url).searchParams;
  return data(
    { org: org.body, keys: keys.ok ? keys.body.data : [], rotated: search.get("rotated"), generated: search.get("generated") },
    { headers: NO_STORE },
  );
}

export async function action(args: ActionFunctionArgs) {
  const { console, form } = await requireConsoleForm(args);
  const orgId = args.params.id!;
  const intent = form.get("intent");
  if (intent !== "rotate" && intent !== "generate") return data({ message: "unknown action" }, { status: 400, headers: NO_STORE });
  const result = await console.admin(intent === "rotate" ? "keys.rotate" : "keys.generate", { params: { orgId }, body: {} });
  if (!result.ok) return data({ message: result.error.message }, { status: result.status, headers: NO_STORE });
  const notice = intent === "rotate" ? "rotated" : "generated";
  return redirect(`/console/organizations/${orgId}/keys?${notice}=${encodeURIComponent(result.body.kid)}`);
}

export default function OrganizationKeys() {
  const { org, keys, rotated, generated } = useLoaderData<typeof loader>();
  const failed = useActionData<typeof action>();
  const { t } = useTranslation("console");
  return (
    <>
      <p className="breadcrumb"><Link to={`/console/organizations/${org.id}`}>{org.name}</Link></p>
      <h1>{t("keys.title")}</h1>
      {rotated ? <Notice kind="info">{t("keys.rotated", { kid: rotated })}</Notice> : null}
      {generated ? <Notice kind="info">{t("keys.generated", { kid: generated })}</Notice> : null}
      {failed ? <Notice kind="error">{failed.message}</Notice> : null}
      <ListTable
        rows={keys}
        rowKey={(k) => k.kid}
        columns={[
          { header: t("keys.kid"), cell: (k) => <code>{k.kid}</code> },
          { header: t("common.status"), cell: (k) => k.status },
          { header: t("common.created"), cell: (k) => <Moment iso={k.createdAt} /> },
          { header: t("keys.retireAfter"), cell: (k) => <Moment iso={k.retireAfter} /> },
        ]}
      />
      <section className="panel actions-panel" aria-label={t("common.actions")}>
        <ConfirmAction intent="rotate" label={t("keys.rotate")} question={t("keys.confirmRotate")} />
        <ConfirmAction intent="generate" label={t("keys.generate")} question={t("keys.confirmGenerate")} />
      </section>
    </>
  );
}
