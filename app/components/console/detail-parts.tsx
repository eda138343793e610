import { useLocation } from "@remix-run/react";
import type { ReactNode } from "react";
import { useTranslation } from "react-i18next";
import { CursorPager } from "./ui";

/**
 * Parts of the console's detail pages (client, application): inputs whose id differs from
 * their name (several forms on one page), the conflict table and the history list.
 */
export function InputField(props: { id: string; name: string; label: string; defaultValue?: string | undefined; error?: string | undefined; hint?: string; required?: boolean; multiline?: boolean }) {
  const { id, name, label, defaultValue, error, hint, required = false, multiline = false } = props;
  const described = [hint ? `${id}-hint` : "", error ? `${id}-error` : ""].filter(Boolean).join(" ") || undefined;
  const common = { id, name, defaultValue, required, "aria-invalid": error ? true : undefined, "aria-describedby": described };
  return (
    <div className="field">
      <label htmlFor={id}>{label}</label>
      {multiline ? <textarea rows={3} {...common} /> : <input {...common} />}
      {hint ? <p id={`${id}-hint`} className="hint">{hint}</p> : null}
      {error ? <p id={`${id}-error`} className="field-error" role="alert">{error}</p> : null}
    </div>
  );
}

/**
 * A table that may scroll sideways on a phone: focusable, so that keyboard users can scroll it
 * even when it holds no link or button.
 */
export function ScrollTable({ label, children }: { label: string; children: ReactNode }) {
  return (
    <div className="table-wrap" role="group" aria-label={label} tabIndex={0}>
      {children}
    </div>
  );
}

export interface ConflictRow {
  field: string;
  now: string;
  yours: string;
}

/** Someone else saved first: what is saved now beside what this person typed, and a reload link. */
export function ConflictView({ text, rows }: { text: string; rows: ConflictRow[] }) {
  const { t } = useTranslation("console");
  const { pathname } = useLocation();
  return (
    <section className="panel conflict" aria-labelledby="conflict-title">
      <h2 id="conflict-title">{t("orgs.conflict.title")}</h2>
      <p role="alert">{text}</p>
      <ScrollTable label={t("orgs.conflict.title")}>
        <table className="list">
          <thead>
            <tr>
              <th scope="col">{t("orgs.conflict.field")}</th>
              <th scope="col">{t("orgs.conflict.current")}</th>
              <th scope="col">{t("orgs.conflict.yours")}</th>
            </tr>
          </thead>
          <tbody>
            {rows.map((r) => (
              <tr key={r.field} className={r.now !== r.yours ? "changed" : undefined}>
                <th scope="row">{r.field}</th>
                <td>{r.now}</td>
                <td>{r.yours}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </ScrollTable>
      <a className="button button-inline" href={pathname}>{t("orgs.conflict.reload")}</a>
    </section>
  );
}

export interface HistoryEntry {
  id: string;
  eventType: string;
  createdAt: string;
  actorType: string;
  actorId: string | null;
}

/** A resource's audit history, newest first; the pager's cursor is the operation's `after`. */
export function HistoryList({ title, entries, nextCursor }: { title: string; entries: HistoryEntry[]; nextCursor: string | null }) {
  const { t, i18n } = useTranslation("console");
  const { search } = useLocation();
  return (
    <section className="panel" aria-labelledby="history-title">
      <h2 id="history-title">{title}</h2>
      {entries.length === 0 ? (
        <p>{t("common.none")}</p>
      ) : (
        <ScrollTable label={title}>
          <table className="list">
            <thead>
              <tr>
                <th scope="col">{t("audit.time")}</th>
                <th scope="col">{t("audit.event")}</th>
                <th scope="col">{t("audit.actor")}</th>
              </tr>
            </thead>
            <tbody>
              {entries.map((e) => (
                <tr key={e.id}>
                  <td>{new Date(e.createdAt).toLocaleString(i18n.language, { timeZone: "UTC" })} UTC</td>
                  <td><code>{e.eventType}</code></td>
                  <td>{e.actorType}{e.actorId ? <> <code>{e.actorId}</code></> : null}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </ScrollTable>
      )}
      <CursorPager search={search} cursor={nextCursor ?? undefined} />
    </section>
  );
}

/** Dates as the other console tables show them: in the page's language, in UTC. */
export function useWhen() {
  const { i18n } = useTranslation("console");
  return (iso: string | null) => (iso ? `${new Date(iso).toLocaleString(i18n.language, { timeZone: "UTC" })} UTC` : "—");
}
