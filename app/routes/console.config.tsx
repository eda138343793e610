import { data, redirect, type ActionFunctionArgs, type LoaderFunctionArgs, type MetaFunction } from "@remix-run/node";
import { useActionData, useLoaderData } from "@remix-run/react";
import { useTranslation } from "react-i18next";
import { consoleHeaders, NO_STORE, requireConsole, requireConsoleForm } from "~/.server/console/page";
import { ActionForm, Notice } from "~/components/console/ui";

export const headers = consoleHeaders;
export const meta: MetaFunction = () => [{ title: "Configuration · Porta console" }];

interface Entry {
  key: string;
  value: unknown;
  default: unknown;
  description: string;
  updatedAt: string | null;
}

export async function loader(args: LoaderFunctionArgs) {
  const console = await requireConsole(args);
  const result = await console.admin<{ data: Entry[] }>("config.list");
  const saved = new URL(args.request.url).searchParams.get("saved");
  return data({ entries: result.ok ? result.body.data : [], saved }, { headers: NO_STORE });
}

/** A value as typed: JSON when it parses (numbers, booleans, lists), else the text itself. */
function valueOf(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

export async function action(args: ActionFunctionArgs) {
  const { console, form } = await requireConsoleForm(args);
  const key = String(form.get("key") ?? "");
  const typed = String(form.get("value") ?? "");
  const result = await console.admin("config.set", { params: { key }, body: { value: valueOf(typed) } });
  if (result.ok) return redirect(`/console/config?saved=${encodeURIComponent(key)}`);
  const message = result.error.details?.map((d) => d.message).join("; ") || result.error.message;
  return data({ key, typed, message }, { status: result.status, headers: NO_STORE });
}

export default function Config() {
  const { entries, saved } = useLoaderData<typeof loader>();
  const failed = useActionData<typeof action>();
  const { t } = useTranslation("console");
  return (
    <>
      <h1>{t("config.title")}</h1>
      {saved ? <Notice kind="info">{t("config.saved", { key: saved })}</Notice> : null}
      <div className="config-list">
        {entries.map((e, i) => {
          const error = failed?.key === e.key ? failed.message : undefined;
          const id = `value-${i}`;
          return (
            <ActionForm key={e.key} intent="set" className="panel config-entry" fields={{ key: e.key }}>
              <div className="field">
                <label htmlFor={id}><code>{e.key}</code></label>
                <p id={`${id}-hint`} className="hint">{e.description} · {t("config.default", { value: JSON.stringify(e.default) })}</p>
                <input
                  id={id}
                  name="value"
                  defaultValue={failed?.key === e.key ? failed.typed : JSON.stringify(e.value)}
                  aria-invalid={error ? true : undefined}
                  aria-describedby={error ? `${id}-hint ${id}-error` : `${id}-hint`}
                />
                {error ? <p id={`${id}-error`} className="field-error" role="alert">{error}</p> : null}
              </div>
              <button type="submit" className="button button-inline button-secondary">{t("common.save")}</button>
            </ActionForm>
          );
        })}
      </div>
    </>
  );
}
