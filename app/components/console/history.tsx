import { Link, useLocation } from "@remix-run/react";
import { useTranslation } from "react-i18next";

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
  const { t, i18n } = useTranslation("console");
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
      ) : page.data.length === 0 ? (
        <p>{t("common.none")}</p>
      ) : (
        <div className="table-wrap">
          <table className="list">
            <thead>
              <tr>
                <th scope="col">{t("audit.time")}</th>
                <th scope="col">{t("audit.event")}</th>
                <th scope="col">{t("audit.actor")}</th>
              </tr>
            </thead>
            <tbody>
              {page.data.map((e) => (
                <tr key={e.id}>
                  <td><time dateTime={e.createdAt}>{new Date(e.createdAt).toLocaleString(i18n.language, { timeZone: "UTC" })} UTC</time></td>
                  <td><code>{e.eventType}</code></td>
                  <td>{e.actorType}{e.actorId ? <> <code>{e.actorId}</code></> : null}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      <nav className="pager" aria-label={t("history.pages")}>
        {paged ? <Link to={newest} preventScrollReset>{t("history.newest")}</Link> : null}
        {page?.hasMore && page.nextCursor ? <Link to={`?${params.toString()}`} preventScrollReset rel="next">{t("history.older")}</Link> : null}
        <Link to={`/console/audit?targetId=${encodeURIComponent(targetId)}`}>{t("history.inAuditLog")}</Link>
      </nav>
    </section>
  );
}
