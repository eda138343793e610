import { data, redirect, type ActionFunctionArgs, type LoaderFunctionArgs, type MetaFunction } from "@remix-run/node";
import { useActionData, useLoaderData } from "@remix-run/react";
import { useTranslation } from "react-i18next";
import { consoleHeaders, NO_STORE, requireConsole, requireConsoleForm } from "~/.server/console/page";
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
  const { t, i18n } = useTranslation("console");
  const when = (iso: string | null) => (iso ? new Date(iso).toLocaleString(i18n.language, { timeZone: "UTC" }) + " UTC" : "—");
  return (
    <>
      <h1>{t("keys.title")}</h1>
      {rotated ? <Notice kind="info">{t("keys.rotated", { kid: rotated })}</Notice> : null}
      {failed ? <Notice kind="error">{failed.message}</Notice> : null}
      <div className="table-wrap">
        <table className="list">
          <thead>
            <tr>
              <th scope="col">{t("keys.kid")}</th>
              <th scope="col">{t("common.status")}</th>
              <th scope="col">{t("common.created")}</th>
              <th scope="col">{t("keys.retireAfter")}</th>
            </tr>
          </thead>
          <tbody>
            {keys.map((k) => (
              <tr key={k.kid}>
                <td><code>{k.kid}</code></td>
                <td>{k.status}</td>
                <td>{when(k.createdAt)}</td>
                <td>{when(k.retireAfter)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      <section className="panel actions-panel" aria-label={t("common.actions")}>
        <ConfirmAction intent="rotate" label={t("keys.rotate")} question={t("keys.confirmRotate")} />
      </section>
    </>
  );
}
