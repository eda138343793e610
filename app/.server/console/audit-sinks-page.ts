import { data, redirect } from "@remix-run/node";
import type { AuditSinkCreate, AuditSinkDeadLetter, AuditSinkKind, AuditSinksPageOutcome } from "~/schemas/audit-sink";
import type { PageCaller } from "./domains-page";
import { NO_STORE } from "./page";

/**
 * An organization's Audit streaming page (decision 092), for both consoles that show it: the
 * service console's (any organization) and the organization's own (decision 090). Each route names
 * the organization and where the page lives; every step is an Admin API operation run as the
 * page's caller, so the tenant checks are the Admin API's.
 */
const FIELDS = ["name", "kind", "url", "secret", "headerName", "caPem", "eventFamilies"];

/** The organization's sinks with their state, and the dead entries of those that have any. */
export async function auditSinksPageData(console: PageCaller, orgId: string, request: Request) {
  const [org, sinks] = await Promise.all([
    console.admin("organizations.get", { params: { id: orgId } }),
    console.admin("auditSinks.list", { params: { orgId }, query: { limit: "100" } }),
  ]);
  if (!org.ok) throw data({ message: org.error.code }, { status: org.status === 422 ? 404 : org.status });
  const rows = sinks.ok ? sinks.body.data : [];
  const deadLetters: Record<string, AuditSinkDeadLetter[]> = {};
  for (const sink of rows.filter((s) => s.dead > 0)) {
    const letters = await console.admin("auditSinks.listDeadLetters", { params: { orgId, id: sink.id }, query: { limit: "20" } });
    deadLetters[sink.id] = letters.ok ? letters.body.data : [];
  }
  const done = new URL(request.url).searchParams.get("done");
  return data({ org: { id: org.body.id, name: org.body.name }, sinks: rows, deadLetters, error: sinks.ok ? null : sinks.error.message, done }, { headers: NO_STORE });
}

const text = (form: FormData, name: string) => {
  const value = form.get(name);
  return typeof value === "string" ? value.trim() : undefined;
};

/** The Admin API's field details beside the form's fields; details of other fields above the form. */
function fieldErrors(details: ReadonlyArray<{ field: string; message: string }>): Record<string, string> {
  const errors: Record<string, string> = {};
  for (const d of details) {
    const field = d.field.split(".")[0]!;
    if (FIELDS.includes(field)) errors[field] ??= d.message;
    else errors.form = [errors.form, `${d.field}: ${d.message}`].filter(Boolean).join("; ");
  }
  return errors;
}

/** The form as the create body: empty fields left out, families ticked. The Admin API checks it. */
function createInput(form: FormData): AuditSinkCreate {
  const families = form.getAll("eventFamilies").filter((v): v is string => typeof v === "string");
  const url = text(form, "url");
  const secret = text(form, "secret");
  const headerName = text(form, "headerName");
  const caPem = text(form, "caPem");
  return {
    name: text(form, "name") ?? "",
    // Any other kind is refused by the Admin API's schema, beside the field.
    kind: (text(form, "kind") ?? "") as AuditSinkKind,
    ...(url ? { url } : {}),
    ...(secret ? { secret } : {}),
    ...(headerName ? { headerName } : {}),
    ...(caPem ? { caPem } : {}),
    ...(families.length > 0 ? { eventFamilies: families } : {}),
  };
}

/** Adds a sink of `orgId`, or tests, turns on or off, deletes one or replays its dead entries; `pagePath` is where the page redirects after a change. */
export async function auditSinksPageAction(console: PageCaller, orgId: string, form: FormData, pagePath: string) {
  const intent = String(form.get("intent") ?? "create");
  const id = String(form.get("sinkId") ?? "");
  const back = (done: string) => redirect(`${pagePath}?done=${done}`);
  const failed = (result: { status: number; error: { message: string } }) => data<AuditSinksPageOutcome>({ kind: "rowFailed", message: result.error.message }, { status: result.status, headers: NO_STORE });
  if (intent === "enable" || intent === "disable") {
    const result = await console.admin("auditSinks.update", { params: { orgId, id }, body: { enabled: intent === "enable" } });
    return result.ok ? back(intent) : failed(result);
  }
  if (intent === "delete") {
    const result = await console.admin("auditSinks.delete", { params: { orgId, id } });
    return result.ok ? back("delete") : failed(result);
  }
  if (intent === "replay") {
    const result = await console.admin("auditSinks.replayDeadLetters", { params: { orgId, id } });
    return result.ok ? back("replay") : failed(result);
  }
  if (intent === "test") {
    const result = await console.admin("auditSinks.test", { params: { orgId, id } });
    if (!result.ok) return failed(result);
    const detail = result.body.error ?? (result.body.statusCode === null ? null : String(result.body.statusCode));
    return data<AuditSinksPageOutcome>({ kind: "tested", name: String(form.get("sinkName") ?? ""), delivered: result.body.delivered, detail }, { headers: NO_STORE });
  }
  const input = createInput(form);
  const { secret: _secret, ...shown } = input;
  // The Admin API checks the body with its schema: a refusal names the field.
  const created = await console.admin("auditSinks.create", { params: { orgId }, body: input });
  if (!created.ok) {
    const errors = created.error.details?.length ? fieldErrors(created.error.details) : { form: created.error.message };
    return data<AuditSinksPageOutcome>({ kind: "invalid", values: shown, errors }, { status: created.status, headers: NO_STORE });
  }
  return back("create");
}

