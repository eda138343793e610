import { Link, useLocation } from "@remix-run/react";
import { useTranslation } from "react-i18next";
import { ListTable, Moment } from "./list-table";

export interface HistoryEntry {
  id: string;
  eventType: string;
  createdAt: string;
  actorType: string;
  actorId: string | null;
}

export interface HistoryPage {
  data: HistoryEntry[];
  hasMore: boolean;
  nextCursor: string | null;
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
          columns={[
            { header: t("audit.time"), cell: (e) => <Moment iso={e.createdAt} /> },
            { header: t("audit.event"), cell: (e) => <code>{e.eventType}</code> },
            { header: t("audit.actor"), cell: (e) => <>{e.actorType}{e.actorId ? <> <code>{e.actorId}</code></> : null}</> },
          ]}
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
