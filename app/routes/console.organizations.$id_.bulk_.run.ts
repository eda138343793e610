import type { ActionFunctionArgs, LoaderFunctionArgs } from "@remix-run/node";
import { redirect } from "@remix-run/node";
import { checkRows, problemOf, readBulkUpload, stageBulk, takeBulkChunk, type BulkStep } from "~/.server/console/bulk-run";
import { NO_STORE, requireConsoleForm } from "~/.server/console/page";
import { MAX_CSV_BYTES } from "~/components/console/bulk-outcome";
import type { BulkOperationInput } from "~/schemas/bulk";

/**
 * The bulk page's steps when its script runs (without a script the page's own form runs the
 * file at once): `stage` reads and checks the file and keeps it in chunks; `run` runs one chunk
 * through the Admin API's bulk.execute, so the page can count rows as they are done.
 */
const json = (body: BulkStep, status = 200) => Response.json(body, { status, headers: NO_STORE });

export async function action(args: ActionFunctionArgs) {
  const { console, form } = await requireConsoleForm(args, MAX_CSV_BYTES + 16 * 1024);
  const { services } = args.context;
  const organizationId = args.params.id!;
  if (form.get("intent") === "stage") {
    const upload = await readBulkUpload(form);
    if (!upload.ok) return json({ kind: "file", problem: upload.problem, detail: upload.detail }, 422);
    const problems = checkRows(organizationId, upload.mode, upload.operations);
    if (problems.length > 0) return json({ kind: "refused", message: null, problems }, 422);
    const staged = await stageBulk(services, console.sessionId, upload.mode, upload.operations);
    return json({ kind: "staged", ...staged });
  }
  const chunk = await takeBulkChunk(services, console.sessionId, String(form.get("token") ?? ""), Number(form.get("chunk")));
  // Already run, expired, or another session's: never run twice.
  if (!chunk) return json({ kind: "gone" }, 409);
  const outcome = await console.admin("bulk.execute", { body: { organizationId, mode: chunk.mode, operations: chunk.operations as BulkOperationInput[] } });
  if (!outcome.ok) {
    const problems = (outcome.error.details ?? []).map((d) => problemOf(d.field, d.message, chunk.offset));
    return json({ kind: "refused", message: outcome.error.message, problems }, outcome.status);
  }
  const results = outcome.body.results.map((r) => ({ ...r, index: r.index + chunk.offset }));
  return json({ kind: "ran", result: { ...outcome.body, results } });
}

export function loader({ params }: LoaderFunctionArgs) {
  return redirect(`/console/organizations/${params.id!}/bulk`);
}
