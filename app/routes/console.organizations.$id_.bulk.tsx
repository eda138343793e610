import type { BulkOperationInput } from "~/schemas/bulk";
import { data, type ActionFunctionArgs, type LoaderFunctionArgs, type MetaFunction } from "@remix-run/node";
import { Form, Link, useActionData, useLoaderData } from "@remix-run/react";
import { useState, type FormEvent } from "react";
import { useTranslation } from "react-i18next";
import { problemOf, readBulkUpload, type BulkProblem } from "~/.server/console/bulk-run";
import { consoleHeaders, NO_STORE, requireConsole, requireConsoleForm } from "~/.server/console/page";
import { BulkRefused, BulkResults, MAX_CSV_BYTES } from "~/components/console/bulk-outcome";
import { Csrf, SelectField, useConsoleFrame } from "~/components/console/ui";
import { BULK_CSV_COLUMNS, BULK_MODES, MAX_BULK_OPERATIONS, type BulkItemResult, type BulkResult } from "~/schemas/bulk";
import type { BulkStep } from "~/.server/console/bulk-run";

export const headers = consoleHeaders;
export const meta: MetaFunction = () => [{ title: "Bulk operations · Porta console" }];

export async function loader(args: LoaderFunctionArgs) {
  const console = await requireConsole(args);
  const org = await console.admin("organizations.get", { params: { id: args.params.id! } });
  if (!org.ok) throw data({ message: org.error.code }, { status: org.status === 422 ? 404 : org.status });
  return data({ org: org.body }, { headers: NO_STORE });
}

type FileProblem = "choose" | "empty" | "unreadable" | "columns" | "tooMany";
type ActionResult =
  | { kind: "file"; problem: FileProblem; detail?: string | undefined }
  | { kind: "refused"; message: string | null; problems: BulkProblem[] }
  | { kind: "done"; result: BulkResult };

/** Without a script, the whole file runs in this one request (the script runs it in steps instead). */
export async function action(args: ActionFunctionArgs) {
  const { console, form } = await requireConsoleForm(args, MAX_CSV_BYTES + 16 * 1024);
  const refuse = (result: ActionResult, status: number) => data<ActionResult>(result, { status, headers: NO_STORE });
  const upload = await readBulkUpload(form);
  if (!upload.ok) return refuse({ kind: "file", problem: upload.problem, detail: upload.detail }, 422);
  // The Admin API operation itself validates every row and runs it (same rules, same audit).
  const outcome = await console.admin("bulk.execute", { body: { organizationId: args.params.id!, mode: upload.mode, operations: upload.operations as BulkOperationInput[] } });
  if (!outcome.ok) {
    const problems = (outcome.error.details ?? []).map((d) => problemOf(d.field, d.message));
    return refuse({ kind: "refused", message: outcome.error.message, problems }, outcome.status);
  }
  return data<ActionResult>({ kind: "done", result: outcome.body }, { headers: NO_STORE });
}

/** What the page's script has done with a file so far. */
type Run =
  | { phase: "checking" }
  | { phase: "running"; done: number; total: number; oneStep: boolean; results: BulkItemResult[] }
  | { phase: "finished"; done: number; total: number; stopped: boolean; results: BulkItemResult[] }
  | { phase: "ended"; outcome: ActionResult };

async function step(url: string, body: FormData | URLSearchParams): Promise<BulkStep | null> {
  try {
    const res = await fetch(url, { method: "POST", body, credentials: "same-origin" });
    return res.headers.get("content-type")?.includes("application/json") ? ((await res.json()) as BulkStep) : null;
  } catch {
    return null;
  }
}

function Progress({ run }: { run: Run }) {
  const { t } = useTranslation("console");
  if (run.phase !== "checking" && run.phase !== "running") return null;
  const label =
    run.phase === "checking" ? t("bulk.checking") : run.oneStep ? t("bulk.progressOneStep", { count: run.total }) : t("bulk.progress", { done: run.done, count: run.total });
  return (
    <div className="panel bulk-progress" role="status" aria-live="polite">
      <label htmlFor="bulk-progress">{label}</label>
      {run.phase === "running" && !run.oneStep ? <progress id="bulk-progress" max={run.total} value={run.done} /> : <progress id="bulk-progress" />}
    </div>
  );
}

export default function Bulk() {
  const { org } = useLoaderData<typeof loader>();
  const posted = useActionData<typeof action>();
  const { csrf } = useConsoleFrame();
  const { t } = useTranslation("console");
  const [run, setRun] = useState<Run | null>(null);
  const result = run?.phase === "ended" ? run.outcome : run ? null : posted;
  const fileError = result?.kind === "file" ? t(`bulk.errors.${result.problem}`, { detail: result.detail ?? "", count: MAX_BULK_OPERATIONS }) : undefined;
  const busy = run?.phase === "checking" || run?.phase === "running";
  const runUrl = `/console/organizations/${org.id}/bulk/run`;

  async function onSubmit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    if (busy) return;
    const form = new FormData(event.currentTarget);
    form.set("intent", "stage");
    setRun({ phase: "checking" });
    const staged = await step(runUrl, form);
    if (!staged || staged.kind === "gone" || staged.kind === "ran") return setRun({ phase: "ended", outcome: { kind: "refused", message: t("error.generic"), problems: [] } });
    if (staged.kind !== "staged") return setRun({ phase: "ended", outcome: staged });
    const oneStep = form.get("mode") !== "best_effort";
    const results: BulkItemResult[] = [];
    setRun({ phase: "running", done: 0, total: staged.total, oneStep, results });
    for (let chunk = 0; chunk < staged.chunks; chunk++) {
      const ran = await step(runUrl, new URLSearchParams({ csrf, intent: "run", token: staged.token, chunk: String(chunk) }));
      if (ran?.kind === "refused") return setRun({ phase: "ended", outcome: ran });
      if (ran?.kind !== "ran") return setRun({ phase: "finished", done: results.length, total: staged.total, stopped: true, results: [...results] });
      results.push(...ran.result.results);
      setRun({ phase: "running", done: results.length, total: staged.total, oneStep, results: [...results] });
    }
    setRun({ phase: "finished", done: results.length, total: staged.total, stopped: false, results });
  }

  const count = (results: BulkItemResult[], status: string) => results.filter((r) => r.status === status).length;
  return (
    <>
      <p className="breadcrumb"><Link to={`/console/organizations/${org.id}`}>{org.name}</Link></p>
      <h1>{t("bulk.title")}</h1>
      <p className="muted">{t("bulk.intro", { columns: BULK_CSV_COLUMNS.join(", "), max: MAX_BULK_OPERATIONS })}</p>
      {run ? <Progress run={run} /> : null}
      {result?.kind === "refused" ? <BulkRefused message={result.message} problems={result.problems} /> : null}
      {result?.kind === "done" ? <BulkResults succeeded={result.result.succeeded} failed={result.result.failed} results={result.result.results} /> : null}
      {run?.phase === "finished" ? (
        <BulkResults
          succeeded={count(run.results, "succeeded")}
          failed={count(run.results, "failed")}
          results={run.results}
          title={run.stopped ? t("bulk.stopped", { done: run.done, count: run.total }) : undefined}
        />
      ) : null}
      <Form method="post" reloadDocument encType="multipart/form-data" onSubmit={onSubmit} className="panel form" aria-labelledby="upload-title">
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
        <button type="submit" className="button button-inline" aria-disabled={busy || undefined}>{t("bulk.run")}</button>
      </Form>
    </>
  );
}
