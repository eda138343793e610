import { data, redirect, type ActionFunctionArgs, type LoaderFunctionArgs, type MetaFunction } from "@remix-run/node";
import { useActionData, useLoaderData } from "@remix-run/react";
import { useTranslation } from "react-i18next";
import { consoleHeaders, NO_STORE, requireConsole, requireConsoleForm } from "~/.server/console/page";
import { ListTable, Moment } from "~/components/console/list-table";
import { ConfirmAction, Notice } from "~/components/console/ui";

export const headers = consoleHeaders;
export const meta: MetaFunction = () => [{ title: "Signing keys · Porta console" }];

interface Key {
  kid: string;
  status: string;
  createdAt: string;
  retireAfter: string | null;
}

export async function loader(args: LoaderFunctionArgs) {
  const console = await requireConsole(args);
  const result = await console.admin<{ data: Key[] }>("keys.list");
  const rotated = new URL(args.request.url).searchParams.get("rotated");
  return data({ keys: result.ok ? result.body.data : [], rotated }, { headers: NO_STORE });
}

export async function action(args: ActionFunctionArgs) {
  const { console } = await requireConsoleForm(args);
  const result = await console.admin<Key>("keys.rotate", { body: {} });
  if (!result.ok) return data({ message: result.error.message }, { status: result.status, headers: NO_STORE });
  return redirect(`/console/keys?rotated=${encodeURIComponent(result.body.kid)}`);
}

export default function Keys() {
  const { keys, rotated } = useLoaderData<typeof loader>();
  const failed = useActionData<typeof action>();
  const { t } = useTranslation("console");
  return (
    <>
      <h1>{t("keys.title")}</h1>
      {rotated ? <Notice kind="info">{t("keys.rotated", { kid: rotated })}</Notice> : null}
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
      </section>
    </>
  );
}
