import { data, type ActionFunctionArgs, type LoaderFunctionArgs, type MetaFunction } from "@remix-run/node";
import { Form, Link, useActionData, useLoaderData } from "@remix-run/react";
import { useTranslation } from "react-i18next";
import { csvLineOf, parseBulkCsv } from "~/.server/console/bulk-csv";
import { consoleHeaders, NO_STORE, requireConsole, requireConsoleForm } from "~/.server/console/page";
import { BusyButton, Csrf, Notice, SelectField } from "~/components/console/ui";
import { BULK_CSV_COLUMNS, BULK_MODES, MAX_BULK_OPERATIONS, type BulkResult } from "~/schemas/bulk";
import type { Organization } from "~/schemas/organization";

export const headers = consoleHeaders;
export const meta: MetaFunction = () => [{ title: "Bulk operations · Porta console" }];

const MAX_CSV_BYTES = 512 * 1024;

export async function loader(args: LoaderFunctionArgs) {
  const console = await requireConsole(args);
  const org = await console.admin<Organization>("organizations.get", { params: { id: args.params.id! } });
  if (!org.ok) throw data({ message: org.error.code }, { status: org.status === 422 ? 404 : org.status });
  return data({ org: org.body }, { headers: NO_STORE });
}

type ActionResult =
  | { kind: "file"; problem: "choose" | "empty" | "unreadable" | "columns" | "tooMany"; detail?: string | undefined }
  | { kind: "refused"; message: string; problems: Array<{ line: number | null; field: string; message: string }> }
  | { kind: "done"; result: BulkResult };

export async function action(args: ActionFunctionArgs) {
  const { console, form } = await requireConsoleForm(args, MAX_CSV_BYTES + 16 * 1024);
  const refuse = (result: ActionResult, status: number) => data<ActionResult>(result, { status, headers: NO_STORE });
  const file = form.get("file");
  if (!(file instanceof File) || file.size === 0) return refuse({ kind: "file", problem: "choose" }, 422);
  const parsed = parseBulkCsv(await file.text());
  if (!parsed.ok) return refuse({ kind: "file", problem: parsed.problem, detail: parsed.detail }, 422);
  if (parsed.operations.length > MAX_BULK_OPERATIONS) return refuse({ kind: "file", problem: "tooMany" }, 422);
  const mode = BULK_MODES.find((m) => m === form.get("mode")) ?? "all_or_nothing";
  // The Admin API operation itself validates every row and runs it (same rules, same audit).
  const outcome = await console.admin<BulkResult>("bulk.execute", { body: { organizationId: args.params.id!, mode, operations: parsed.operations } });
  if (!outcome.ok) {
    const problems = (outcome.error.details ?? []).map((d) => ({ line: csvLineOf(d.field), field: d.field.replace(/^operations\.\d+\.?/, ""), message: d.message }));
    return refuse({ kind: "refused", message: outcome.error.message, problems }, outcome.status);
  }
  return data<ActionResult>({ kind: "done", result: outcome.body }, { headers: NO_STORE });
}

export default function Bulk() {
  const { org } = useLoaderData<typeof loader>();
  const result = useActionData<typeof action>();
  const { t } = useTranslation("console");
  const fileError = result?.kind === "file" ? t(`bulk.errors.${result.problem}`, { detail: result.detail ?? "", max: MAX_BULK_OPERATIONS }) : undefined;
  return (
    <>
      <p className="breadcrumb"><Link to={`/console/organizations/${org.id}`}>{org.name}</Link></p>
      <h1>{t("bulk.title")}</h1>
      <p className="muted">{t("bulk.intro", { columns: BULK_CSV_COLUMNS.join(", "), max: MAX_BULK_OPERATIONS })}</p>
      {result?.kind === "refused" ? (
        <section className="panel" aria-labelledby="refused-title">
          <h2 id="refused-title">{t("bulk.refused")}</h2>
          <Notice kind="error">{result.message}</Notice>
          {result.problems.length > 0 ? (
            <ul>
              {result.problems.map((p, i) => (
                <li key={i}>{p.line ? t("bulk.line", { line: p.line }) : null} {p.field ? <code>{p.field}</code> : null} {p.message}</li>
              ))}
            </ul>
          ) : null}
        </section>
      ) : null}
      {result?.kind === "done" ? (
        <section className="panel" aria-labelledby="done-title">
          <h2 id="done-title">{t("bulk.done", { succeeded: result.result.succeeded, failed: result.result.failed })}</h2>
          <div className="table-wrap">
            <table className="list">
              <caption className="visually-hidden">{t("bulk.results")}</caption>
              <thead>
                <tr>
                  <th scope="col">{t("bulk.lineHeader")}</th>
                  <th scope="col">{t("bulk.op")}</th>
                  <th scope="col">{t("common.status")}</th>
                  <th scope="col">{t("bulk.detail")}</th>
                </tr>
              </thead>
              <tbody>
                {result.result.results.map((r) => (
                  <tr key={r.index}>
                    <td>{r.index + 2}</td>
                    <td><code>{r.op}</code></td>
                    <td>{t(`bulk.status.${r.status}`)}</td>
                    <td>{r.user?.email ?? r.error?.message ?? ""}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        </section>
      ) : null}
      <Form method="post" reloadDocument encType="multipart/form-data" className="panel form" aria-labelledby="upload-title">
        <h2 id="upload-title">{t("bulk.upload")}</h2>
        <Csrf />
        <div className="field">
          <label htmlFor="file">{t("bulk.file")}</label>
          <input id="file" name="file" type="file" accept="text/csv,.csv" required aria-invalid={fileError ? true : undefined} aria-describedby={fileError ? "file-error" : undefined} />
          {fileError ? <p id="file-error" className="field-error" role="alert">{fileError}</p> : null}
        </div>
        <SelectField
          name="mode"
          label={t("bulk.mode")}
          defaultValue="all_or_nothing"
          options={BULK_MODES.map((m) => ({ value: m, label: t(`bulk.modes.${m}`) }))}
        />
        <BusyButton label={t("bulk.run")} busyLabel={t("bulk.working")} />
      </Form>
    </>
  );
}
