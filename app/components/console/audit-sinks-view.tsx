import type { ReactNode } from "react";
import { Form } from "@remix-run/react";
import { useTranslation } from "react-i18next";
import { ListTable } from "~/components/console/list-table";
import { ActionMenu, CheckboxGroup, ConfirmAction, Csrf, Notice, SelectField, TextField } from "~/components/console/ui";
import { AUDIT_EVENT_FAMILIES } from "~/schemas/audit-events";
import { AUDIT_SINK_KINDS, type AuditSink, type AuditSinkDeadLetter, type AuditSinksPageOutcome } from "~/schemas/audit-sink";

/**
 * The Audit streaming page of both consoles (decision 092): an organization's sinks with their
 * state (waiting, dead, last delivery, last error), a test event, on or off, delete, the dead
 * entries with their replay, and the form that adds a sink.
 */
export interface AuditSinksViewProps {
  sinks: AuditSink[];
  deadLetters: Record<string, AuditSinkDeadLetter[]>;
  error: string | null;
  done: string | null;
  result: AuditSinksPageOutcome | undefined;
  breadcrumb?: ReactNode;
}

export function AuditSinksView({ sinks, deadLetters, error, done, result, breadcrumb }: AuditSinksViewProps) {
  const { t } = useTranslation("console");
  const errors = result?.kind === "invalid" ? result.errors : {};
  const values = result?.kind === "invalid" ? result.values : {};
  const value = (name: string) => (typeof values[name] === "string" ? (values[name] as string) : undefined);
  const families = AUDIT_EVENT_FAMILIES;
  const when = (iso: string | null) => (iso ? new Date(iso).toLocaleString() : t("auditSinks.never"));
  return (
    <>
      {breadcrumb}
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
