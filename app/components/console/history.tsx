import { Link, useLocation } from "@remix-run/react";
import type { TFunction } from "i18next";
import { useTranslation } from "react-i18next";
import { ListTable, Moment, type Column } from "./list-table";

export interface HistoryEntry {
  id: string;
  eventType: string;
  createdAt: string;
  actorType: string;
  actorId: string | null;
  data?: unknown;
}

export interface HistoryPage {
  data: HistoryEntry[];
  hasMore: boolean;
  nextCursor: string | null;
}

/** The columns every audit listing starts with: when, what, and who did it. */
export function auditColumns(t: TFunction<"console">): Array<Column<HistoryEntry>> {
  return [
    { header: t("audit.time"), cell: (e) => <Moment iso={e.createdAt} /> },
    { header: t("audit.event"), cell: (e) => <code>{e.eventType}</code> },
    { header: t("audit.actor"), cell: (e) => <>{e.actorType}{e.actorId ? <> <code>{e.actorId}</code></> : null}</> },
  ];
}

/** The fields an audit entry says were changed, as "field: value" (secrets are never recorded). */
export function changeOf(data: unknown): string {
  const change = data && typeof data === "object" && "change" in data ? (data as { change: unknown }).change : null;
  if (!change || typeof change !== "object") return "";
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
