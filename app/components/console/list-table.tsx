import type { ReactNode } from "react";
import { useTranslation } from "react-i18next";

export interface Column<T> {
  header: string;
  cell: (row: T) => ReactNode;
}

/**
 * A console list: a scrollable table with column headers, one row per item, or "nothing here
 * yet" when there is none. Paging stays with the page (CursorPager), since pages page differently.
 */
export function ListTable<T>(props: { rows: readonly T[]; columns: ReadonlyArray<Column<T>>; rowKey: (row: T) => string; caption?: string; empty?: string }) {
  const { rows, columns, rowKey, caption, empty } = props;
  const { t } = useTranslation("console");
  // An empty list says what to do next where the page knows it.
  if (rows.length === 0) return <p className="empty-state">{empty ?? t("common.none")}</p>;
  return (
    <ScrollTable label={caption}>
      <table className="list">
        {caption ? <caption className="visually-hidden">{caption}</caption> : null}
        <thead>
          <tr>
            {columns.map((c) => (
              <th scope="col" key={c.header}>{c.header}</th>
            ))}
          </tr>
        </thead>
        <tbody>
          {rows.map((row) => (
            <tr key={rowKey(row)}>
              {columns.map((c) => (
                <td key={c.header}>{c.cell(row)}</td>
              ))}
            </tr>
          ))}
        </tbody>
      </table>
    </ScrollTable>
  );
}

/**
 * A table that may scroll sideways on a phone: focusable, so that keyboard users can scroll it
 * even when it holds no link or button.
 */
export function ScrollTable({ label, children }: { label?: string | undefined; children: ReactNode }) {
  return (
    <div className="table-wrap" role="group" aria-label={label} tabIndex={0}>
      {children}
    </div>
  );
}

/** A moment as the console shows it everywhere: in the page's language, in UTC, and machine-readable. */
export function Moment({ iso }: { iso: string | null | undefined }) {
  const { i18n } = useTranslation("console");
  if (!iso) return <>—</>;
  return <time dateTime={iso}>{new Date(iso).toLocaleString(i18n.language, { timeZone: "UTC" })} UTC</time>;
}
