import { Link, useLocation } from "@remix-run/react";
import type { TFunction } from "i18next";
import { useTranslation } from "react-i18next";
import { ActorRef, type AuditNames } from "./audit-names";
import { ListTable, Moment, type Column } from "./list-table";

export interface HistoryEntry {
  id: string;
  eventType: string;
  createdAt: string;
  actorType: string;
  actorId: string | null;
  data?: unknown;
  names?: AuditNames;
}

export interface HistoryPage {
  data: HistoryEntry[];
  hasMore: boolean;
  nextCursor: string | null;
}

/**
 * The columns every audit listing starts with: when (opening the entry's own page), what, and
 * who did it, by name with a link (the id on hover).
 */
export function auditColumns(t: TFunction<"console">): Array<Column<HistoryEntry>> {
  return [
    { header: t("audit.time"), cell: (e) => <Link to={`/console/audit/${e.id}`} title={t("audit.open", { event: e.eventType })}><Moment iso={e.createdAt} /></Link> },
    { header: t("audit.event"), cell: (e) => <code>{e.eventType}</code> },
    { header: t("audit.actor"), cell: (e) => <ActorRef actorType={e.actorType} actorId={e.actorId} named={e.names?.actor ?? null} /> },
  ];
}

interface FieldChange {
  field: string;
  before: unknown;
  after: unknown;
}

/** An update's field-by-field changes, as the audit writer records them (`data.changes`). */
export function fieldChangesOf(data: unknown): FieldChange[] | null {
  const changes = data && typeof data === "object" && "changes" in data ? (data as { changes: unknown }).changes : null;
  if (!Array.isArray(changes)) return null;
  return changes.filter((c): c is FieldChange => !!c && typeof c === "object" && typeof (c as FieldChange).field === "string");
}

/** A recorded value as text: strings as they are, nothing as "—", the rest as JSON. */
export function valueText(value: unknown): string {
  if (value === null || value === undefined || value === "") return "—";
  return typeof value === "string" ? value : JSON.stringify(value);
}

/**
 * What an audit entry says was changed: "field: before → after" for updates that record both
 * states, else the fields sent as "field: value" (secrets are never recorded).
 */
export function changeOf(data: unknown): string {
  const fields = fieldChangesOf(data);
  if (fields) return fields.map((c) => `${c.field}: ${valueText(c.before)} → ${valueText(c.after)}`).join(", ");
  const change = data && typeof data === "object" && "change" in data ? (data as { change: unknown }).change : null;
  if (!change || typeof change !== "object") {
    // A refused sign-in says why (the attempt's email is the account's own, on its page).
    const reason = data && typeof data === "object" && "reason" in data ? (data as { reason: unknown }).reason : null;
    return typeof reason === "string" ? `reason: ${reason}` : "";
  }
  return Object.entries(change)
    .map(([k, v]) => `${k}: ${typeof v === "string" ? v : JSON.stringify(v)}`)
    .join(", ");
}

/** The query parameter that carries an entity page's history cursor (the page's own stay). */
export const HISTORY_PARAM = "historyAfter";

/** The history query of an entity page's loader, from its URL. */
export function historyQuery(url: string, limit = 10): Record<string, string | undefined> {
  return { limit: String(limit), after: new URL(url).searchParams.get(HISTORY_PARAM) ?? undefined };
}

/**
 * An entity's audit history (newest first) as a section of its page, with "older entries"
 * paging by the history cursor and a link to the whole audit log filtered to the entity.
 */
export function HistorySection({ page, targetId }: { page: HistoryPage | null; targetId: string }) {
  const { t } = useTranslation("console");
  const { search } = useLocation();
  const params = new URLSearchParams(search);
  const paged = params.has(HISTORY_PARAM);
  params.delete(HISTORY_PARAM);
  // A notice of the last action belongs to that action, not to paging.
  params.delete("done");
  const newest = `?${params.toString()}`;
  if (page?.nextCursor) params.set(HISTORY_PARAM, page.nextCursor);
  return (
    <section className="panel" aria-labelledby="history-title">
      <h2 id="history-title">{t("history.title")}</h2>
      {!page ? (
        <p>{t("history.unavailable")}</p>
      ) : (
        <ListTable
          rows={page.data}
          rowKey={(e) => e.id}
          caption={t("history.title")}
          columns={[...auditColumns(t), { header: t("history.change"), cell: (e) => <span className="history-change">{changeOf(e.data)}</span> }]}
        />
      )}
      <nav className="pager" aria-label={t("history.pages")}>
        {paged ? <Link to={newest} preventScrollReset>{t("history.newest")}</Link> : null}
        {page?.hasMore && page.nextCursor ? <Link to={`?${params.toString()}`} preventScrollReset rel="next">{t("history.older")}</Link> : null}
        <Link to={`/console/audit?targetId=${encodeURIComponent(targetId)}`}>{t("history.inAuditLog")}</Link>
      </nav>
    </section>
  );
}
