import { data, redirect, type ActionFunctionArgs, type LoaderFunctionArgs, type MetaFunction } from "@remix-run/node";
import { Form, Link, useActionData, useLoaderData } from "@remix-run/react";
import { useTranslation } from "react-i18next";
import { consoleHeaders, NO_STORE, requireConsole, requireConsoleForm } from "~/.server/console/page";
import { detailErrors, list, text, zodFieldErrors } from "~/components/console/forms";
import { ListTable } from "~/components/console/list-table";
import { ActionMenu, CheckboxGroup, ConfirmAction, Csrf, Notice, SelectField, TextField } from "~/components/console/ui";
import { AUDIT_EVENT_FAMILIES } from "~/schemas/audit-events";
import { AUDIT_SINK_KINDS, AuditSinkCreateSchema, type AuditSinkDeadLetter } from "~/schemas/audit-sink";

export const headers = consoleHeaders;
export const meta: MetaFunction = () => [{ title: "Audit streaming · Porta console" }];

const FIELDS = ["name", "kind", "url", "secret", "headerName", "caPem", "eventFamilies"];

/**
 * An organization's audit sinks (decision 092): each with its state (waiting, dead, last delivery,
 * last error), a test event, turning it on or off, and its dead letters with their replay.
 */
export async function loader(args: LoaderFunctionArgs) {
  const console = await requireConsole(args);
  const orgId = args.params.id!;
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
  const done = new URL(args.request.url).searchParams.get("done");
  return data({ org: org.body, sinks: rows, deadLetters, error: sinks.ok ? null : sinks.error.message, done }, { headers: NO_STORE });
}

/** The form as the create body: empty fields left out, families ticked. */
function createInput(form: FormData) {
  const optional = (name: string) => {
    const value = text(form, name);
    return value ? { [name]: value } : {};
  };
  const families = list(form, "eventFamilies");
  return {
    name: text(form, "name") ?? "",
    kind: text(form, "kind") ?? "",
    ...optional("url"),
    ...optional("secret"),
    ...optional("headerName"),
    ...optional("caPem"),
    ...(families.length > 0 ? { eventFamilies: families } : {}),
  };
}

type ActionResult =
  | { kind: "invalid"; values: Record<string, unknown>; errors: Record<string, string> }
  | { kind: "tested"; name: string; delivered: boolean; detail: string | null }
  | { kind: "rowFailed"; message: string };

export async function action(args: ActionFunctionArgs) {
  const { console, form } = await requireConsoleForm(args);
  const orgId = args.params.id!;
  const intent = String(form.get("intent") ?? "create");
  const id = String(form.get("sinkId") ?? "");
  const back = (done: string) => redirect(`/console/organizations/${orgId}/audit-sinks?done=${done}`);
  const failed = (result: { status: number; error: { message: string } }) => data<ActionResult>({ kind: "rowFailed", message: result.error.message }, { status: result.status, headers: NO_STORE });
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
    return data<ActionResult>({ kind: "tested", name: String(form.get("sinkName") ?? ""), delivered: result.body.delivered, detail }, { headers: NO_STORE });
  }
  const input = createInput(form);
  const { secret: _secret, ...shown } = input as Record<string, unknown>;
  const parsed = AuditSinkCreateSchema.safeParse(input);
  if (!parsed.success) return data<ActionResult>({ kind: "invalid", values: shown, errors: zodFieldErrors(parsed.error) }, { status: 422, headers: NO_STORE });
  const created = await console.admin("auditSinks.create", { params: { orgId }, body: parsed.data });
  if (!created.ok) {
    const errors = created.error.details ? detailErrors(created.error.details, FIELDS) : { form: created.error.message };
    return data<ActionResult>({ kind: "invalid", values: shown, errors }, { status: created.status, headers: NO_STORE });
  }
  return back("create");
}

export default function AuditSinks() {
  const { org, sinks, deadLetters, error, done } = useLoaderData<typeof loader>();
  const result = useActionData<typeof action>();
  const { t } = useTranslation("console");
  const errors = result?.kind === "invalid" ? result.errors : {};
  const values = result?.kind === "invalid" ? result.values : {};
  const value = (name: string) => (typeof values[name] === "string" ? (values[name] as string) : undefined);
  const families = AUDIT_EVENT_FAMILIES;
  const when = (iso: string | null) => (iso ? new Date(iso).toLocaleString() : t("auditSinks.never"));
  return (
    <>
      <p className="breadcrumb"><Link to={`/console/organizations/${org.id}`}>{org.name}</Link></p>
      <h1>{t("auditSinks.title")}</h1>
      <p className="muted">{t("auditSinks.intro")}</p>
      {done ? <Notice kind="info">{t(`auditSinks.done.${done}`)}</Notice> : null}
      {error ? <Notice kind="error">{error}</Notice> : null}
      {result?.kind === "rowFailed" ? <Notice kind="error">{result.message}</Notice> : null}
      {result?.kind === "tested" ? (
        <Notice kind={result.delivered ? "info" : "error"}>
          {result.delivered ? t("auditSinks.testDelivered", { name: result.name }) : t("auditSinks.testFailed", { name: result.name, detail: result.detail ?? "" })}
        </Notice>
      ) : null}
      <ListTable
        rows={sinks}
        rowKey={(s) => s.id}
        empty={t("auditSinks.empty")}
        columns={[
          { header: t("auditSinks.name"), cell: (s) => s.name },
          { header: t("auditSinks.kind"), cell: (s) => t(`auditSinks.kinds.${s.kind}`) },
          { header: t("auditSinks.url"), cell: (s) => (s.url ? <code>{s.url}</code> : t("auditSinks.tracingEndpoint")) },
          { header: t("auditSinks.families"), cell: (s) => (s.eventFamilies.length > 0 ? s.eventFamilies.join(", ") : t("auditSinks.allEvents")) },
          { header: t("common.status"), cell: (s) => (s.enabled ? t("auditSinks.on") : t("auditSinks.off")) },
          {
            header: t("auditSinks.state"),
            cell: (s) => (
              <>
                {t("auditSinks.stateLine", { pending: s.pending, dead: s.dead, delivered: s.deliveredCount })}
                <br />
                <span className="muted">{t("auditSinks.lastDelivered", { when: when(s.lastDeliveredAt) })}</span>
                {s.lastError ? (
                  <>
                    <br />
                    <span className="field-error">{t("auditSinks.lastError", { error: s.lastError })}</span>
                  </>
                ) : null}
              </>
            ),
          },
          {
            header: t("common.actions"),
            cell: (s) => (
              <ActionMenu name={s.name}>
                <ConfirmAction intent="test" label={t("auditSinks.test")} question={t("auditSinks.confirmTest", { name: s.name })} fields={{ sinkId: s.id, sinkName: s.name }} />
                {s.dead > 0 ? <ConfirmAction intent="replay" label={t("auditSinks.replay")} question={t("auditSinks.confirmReplay", { name: s.name, count: s.dead })} fields={{ sinkId: s.id }} /> : null}
                {s.enabled ? (
                  <ConfirmAction intent="disable" label={t("auditSinks.disable")} question={t("auditSinks.confirmDisable", { name: s.name })} fields={{ sinkId: s.id }} />
                ) : (
                  <ConfirmAction intent="enable" label={t("auditSinks.enable")} question={t("auditSinks.confirmEnable", { name: s.name })} fields={{ sinkId: s.id }} />
                )}
                <ConfirmAction intent="delete" danger label={t("auditSinks.delete")} question={t("auditSinks.confirmDelete", { name: s.name })} fields={{ sinkId: s.id }} />
              </ActionMenu>
            ),
          },
        ]}
      />

      {sinks
        .filter((s) => (deadLetters[s.id] ?? []).length > 0)
        .map((s) => (
          <section key={s.id} className="panel" aria-labelledby={`dead-${s.id}`}>
            <h2 id={`dead-${s.id}`}>{t("auditSinks.deadLettersOf", { name: s.name })}</h2>
            <ListTable
              rows={deadLetters[s.id] ?? []}
              rowKey={(l) => l.id}
              empty=""
              columns={[
                { header: t("auditSinks.event"), cell: (l) => <code>{l.eventType}</code> },
                { header: t("auditSinks.entry"), cell: (l) => <code>{l.auditEntryId}</code> },
                { header: t("auditSinks.attempts"), cell: (l) => l.attempts },
                { header: t("auditSinks.error"), cell: (l) => l.lastError ?? "" },
              ]}
            />
            <ConfirmAction intent="replay" label={t("auditSinks.replay")} question={t("auditSinks.confirmReplay", { name: s.name, count: s.dead })} fields={{ sinkId: s.id }} />
          </section>
        ))}

      <Form method="post" reloadDocument noValidate className="panel form" aria-labelledby="new-sink-title">
        <h2 id="new-sink-title">{t("auditSinks.new")}</h2>
        {errors.form ? <Notice kind="error">{errors.form}</Notice> : null}
        <Csrf />
        <input type="hidden" name="intent" value="create" />
        <TextField name="name" label={t("auditSinks.name")} defaultValue={value("name")} error={errors.name} required />
        <SelectField name="kind" label={t("auditSinks.kind")} options={AUDIT_SINK_KINDS.map((k) => ({ value: k, label: t(`auditSinks.kinds.${k}`) }))} defaultValue={value("kind") ?? "splunk_hec"} error={errors.kind} />
        <TextField name="url" label={t("auditSinks.url")} defaultValue={value("url")} error={errors.url} hint={t("auditSinks.urlHint")} />
        <TextField name="secret" label={t("auditSinks.secret")} error={errors.secret} hint={t("auditSinks.secretHint")} />
        <TextField name="headerName" label={t("auditSinks.headerName")} defaultValue={value("headerName")} error={errors.headerName} hint={t("auditSinks.headerNameHint")} />
        <div className="field">
          <label htmlFor="caPem">{t("auditSinks.caPem")}</label>
          <textarea id="caPem" name="caPem" rows={4} defaultValue={value("caPem")} aria-invalid={errors.caPem ? true : undefined} aria-describedby={errors.caPem ? "caPem-error" : "caPem-hint"} />
          <p id="caPem-hint" className="hint">{t("auditSinks.caPemHint")}</p>
          {errors.caPem ? <p id="caPem-error" className="field-error" role="alert">{errors.caPem}</p> : null}
        </div>
        <CheckboxGroup
          name="eventFamilies"
          legend={t("auditSinks.familiesLegend")}
          options={families.map((f) => ({ value: f, label: f }))}
          checked={Array.isArray(values.eventFamilies) ? (values.eventFamilies as string[]) : []}
          error={errors.eventFamilies}
        />
        <button type="submit" className="button">{t("auditSinks.create")}</button>
      </Form>
    </>
  );
}
