import type { OperationInput } from "~/.server/admin/http/operation-table";
import { data, type ActionFunctionArgs, type LoaderFunctionArgs, type MetaFunction } from "@remix-run/node";
import { Form, useActionData } from "@remix-run/react";
import { useTranslation } from "react-i18next";
import { stashImport, takeImport } from "~/.server/console/import-stash";
import { consoleHeaders, NO_STORE, requireConsole, requireConsoleForm } from "~/.server/console/page";
import { BusyButton, Csrf, Notice, TextField } from "~/components/console/ui";
import { MAX_IMPORT_BYTES, type ImportPlan } from "~/schemas/transfer";

export const headers = consoleHeaders;
export const meta: MetaFunction = () => [{ title: "Imports · Porta console" }];

export async function loader(args: LoaderFunctionArgs) {
  await requireConsole(args);
  return data({}, { headers: NO_STORE });
}

type ActionResult =
  | { kind: "error"; message: string; field: "file" | "slug" | "form" }
  | { kind: "preview"; plan: ImportPlan; token: string; slug: string; copy: boolean }
  | { kind: "applied"; plan: ImportPlan };

function parsePackage(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

export async function action(args: ActionFunctionArgs) {
  const { console, form } = await requireConsoleForm(args, MAX_IMPORT_BYTES + 64 * 1024);
  const { services } = args.context;
  const slug = String(form.get("slug") ?? "").trim();
  const copy = form.get("copy") === "on";
  const fail = (status: number, field: "file" | "slug" | "form", message: string) => data<ActionResult>({ kind: "error", field, message }, { status, headers: NO_STORE });

  let packageText: string | null;
  if (form.get("intent") === "apply") {
    packageText = await takeImport(services, console.sessionId, String(form.get("token") ?? ""));
    if (!packageText) return fail(409, "form", "expired");
  } else {
    const file = form.get("file");
    if (!(file instanceof File) || file.size === 0) return fail(422, "file", "choose");
    packageText = await file.text();
  }
  const pkg = parsePackage(packageText);
  if (pkg === undefined) return fail(422, "file", "json");
  // The file's JSON as it is: the Admin API checks it against the package schema (422 names the fields).
  const body = { package: pkg as NonNullable<OperationInput<"imports.apply">["body"]>["package"], ...(slug ? { slug } : {}), ...(copy ? { copy } : {}) };
  const operationId = form.get("intent") === "apply" ? "imports.apply" : "imports.preview";
  const result = await console.admin(operationId, { body });
  if (!result.ok) {
    const details = result.error.details ?? [];
    const slugError = details.find((d) => d.field === "slug");
    if (slugError) return fail(result.status, "slug", slugError.message);
    return fail(result.status, "file", details.length ? details.slice(0, 5).map((d) => `${d.field}: ${d.message}`).join("; ") : result.error.message);
  }
  if (operationId === "imports.apply") return data<ActionResult>({ kind: "applied", plan: result.body }, { headers: NO_STORE });
  const token = await stashImport(services, console.sessionId, packageText);
  return data<ActionResult>({ kind: "preview", plan: result.body, token, slug, copy }, { headers: NO_STORE });
}

function Plan({ plan }: { plan: ImportPlan }) {
  const { t } = useTranslation("console");
  return (
    <>
      <p>
        {t("imports.target", { slug: plan.organization.slug, action: t(`imports.actions.${plan.organization.action}`) })}{" "}
        {t("imports.summary", { create: plan.summary.create, update: plan.summary.update, unchanged: plan.summary.unchanged })}
      </p>
      {plan.changes.length > 0 ? (
        <div className="table-wrap">
          <table className="list">
            <caption className="visually-hidden">{t("imports.changes")}</caption>
            <thead>
              <tr>
                <th scope="col">{t("imports.type")}</th>
                <th scope="col">{t("imports.key")}</th>
                <th scope="col">{t("imports.action")}</th>
                <th scope="col">{t("imports.fields")}</th>
              </tr>
            </thead>
            <tbody>
              {plan.changes.map((c) => (
                <tr key={`${c.type}:${c.key}`}>
                  <td>{c.type}</td>
                  <td><code>{c.key}</code></td>
                  <td>{t(`imports.actions.${c.action}`)}</td>
                  <td>{c.fields?.join(", ") ?? ""}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      ) : null}
    </>
  );
}

export default function Imports() {
  const result = useActionData<typeof action>();
  const { t } = useTranslation("console");
  const error = result?.kind === "error" ? result : null;
  const message = (m: string) => (m === "choose" || m === "json" || m === "expired" ? t(`imports.errors.${m}`) : m);
  return (
    <>
      <h1>{t("imports.title")}</h1>
      <p className="muted">{t("imports.intro")}</p>
      {error?.field === "form" ? <Notice kind="error">{message(error.message)}</Notice> : null}
      {result?.kind === "applied" ? (
        <section className="panel" aria-labelledby="applied-title">
          <h2 id="applied-title">{t("imports.applied")}</h2>
          <Plan plan={result.plan} />
        </section>
      ) : null}
      {result?.kind === "preview" ? (
        <section className="panel" aria-labelledby="preview-title">
          <h2 id="preview-title">{t("imports.preview")}</h2>
          <Plan plan={result.plan} />
          <Form method="post" reloadDocument>
            <Csrf />
            <input type="hidden" name="intent" value="apply" />
            <input type="hidden" name="token" value={result.token} />
            <input type="hidden" name="slug" value={result.slug} />
            {result.copy ? <input type="hidden" name="copy" value="on" /> : null}
            <BusyButton label={t("imports.apply")} busyLabel={t("imports.working")} />
          </Form>
        </section>
      ) : (
        <Form method="post" reloadDocument encType="multipart/form-data" className="panel form" aria-labelledby="upload-title">
          <h2 id="upload-title">{t("imports.upload")}</h2>
          <Csrf />
          <input type="hidden" name="intent" value="preview" />
          <div className="field">
            <label htmlFor="file">{t("imports.file")}</label>
            <input id="file" name="file" type="file" accept="application/json,.json" required aria-describedby={error?.field === "file" ? "file-error" : undefined} />
            {error?.field === "file" ? <p id="file-error" className="field-error" role="alert">{message(error.message)}</p> : null}
          </div>
          <TextField name="slug" label={t("imports.slug")} hint={t("imports.slugHint")} error={error?.field === "slug" ? error.message : undefined} />
          <div className="field">
            <label>
              <input type="checkbox" name="copy" aria-describedby="copy-hint" /> {t("imports.copy")}
            </label>
            <p id="copy-hint" className="hint">
              {t("imports.copyHint")}
            </p>
          </div>
          <BusyButton label={t("imports.previewButton")} busyLabel={t("imports.working")} />
        </Form>
      )}
    </>
  );
}
