import { data, redirect, type ActionFunctionArgs, type LoaderFunctionArgs, type MetaFunction } from "@remix-run/node";
import { Form, useActionData, useLoaderData } from "@remix-run/react";
import { useState, type FormEvent } from "react";
import { useTranslation } from "react-i18next";
import { consoleHeaders, NO_STORE, requireConsole, requireConsoleForm } from "~/.server/console/page";
import { Csrf, Notice } from "~/components/console/ui";
import { isSettingKey, SETTING_SCHEMAS, typedValue } from "~/schemas/settings";

export const headers = consoleHeaders;
export const meta: MetaFunction = () => [{ title: "Configuration · Porta console" }];

export async function loader(args: LoaderFunctionArgs) {
  const console = await requireConsole(args);
  const result = await console.admin("config.list");
  const saved = new URL(args.request.url).searchParams.get("saved");
  return data({ entries: result.ok ? result.body.data : [], saved }, { headers: NO_STORE });
}

export async function action(args: ActionFunctionArgs) {
  const { console, form } = await requireConsoleForm(args);
  const key = String(form.get("key") ?? "");
  const typed = String(form.get("value") ?? "");
  const result = await console.admin("config.set", { params: { key }, body: { value: typedValue(typed) } });
  if (result.ok) return redirect(`/console/config?saved=${encodeURIComponent(key)}`);
  const message = result.error.details?.map((d) => d.message).join("; ") || result.error.message;
  return data({ key, typed, message }, { status: result.status, headers: NO_STORE });
}

export default function Config() {
  const { entries, saved } = useLoaderData<typeof loader>();
  const failed = useActionData<typeof action>();
  const { t } = useTranslation("console");
  const [checked, setChecked] = useState<{ key: string; message: string } | null>(null);

  /** The key's own schema, as the Admin API applies it, before the value is sent. */
  function onSubmit(event: FormEvent<HTMLFormElement>) {
    const form = new FormData(event.currentTarget);
    const key = String(form.get("key") ?? "");
    if (!isSettingKey(key)) return;
    const parsed = SETTING_SCHEMAS[key].safeParse(typedValue(String(form.get("value") ?? "")));
    if (parsed.success) return setChecked(null);
    event.preventDefault();
    setChecked({ key, message: parsed.error.issues.map((i) => i.message).join("; ") });
  }

  return (
    <>
      <h1>{t("config.title")}</h1>
      {saved ? <Notice kind="info">{t("config.saved", { key: saved })}</Notice> : null}
      <div className="config-list">
        {entries.map((e, i) => {
          const error = checked ? (checked.key === e.key ? checked.message : undefined) : failed?.key === e.key ? failed.message : undefined;
          const id = `value-${i}`;
          return (
            <Form key={e.key} method="post" reloadDocument noValidate onSubmit={onSubmit} className="panel config-entry">
              <Csrf />
              <input type="hidden" name="key" value={e.key} />
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
            </Form>
          );
        })}
      </div>
    </>
  );
}
