import { useTranslation } from "react-i18next";
import type { BulkItemResult } from "~/schemas/bulk";
import { ListTable } from "./list-table";
import { Notice } from "./ui";

/** The largest CSV file the bulk page takes (500 rows fit easily). */
export const MAX_CSV_BYTES = 512 * 1024;

export interface BulkProblemView {
  line: number | null;
  field: string;
  message: string;
}

/** A file the Admin API refused, each problem named by its line in the file. */
export function BulkRefused({ message, problems }: { message: string | null; problems: BulkProblemView[] }) {
  const { t } = useTranslation("console");
  return (
    <section className="panel" aria-labelledby="refused-title">
      <h2 id="refused-title">{t("bulk.refused")}</h2>
      <Notice kind="error">{message ?? t("bulk.checkedFirst")}</Notice>
      {problems.length > 0 ? (
        <ul>
          {problems.map((p, i) => (
            <li key={i}>{p.line ? t("bulk.line", { line: p.line }) : null} {p.field ? <code>{p.field}</code> : null} {p.message}</li>
          ))}
        </ul>
      ) : null}
    </section>
  );
}

/** A result per row; row N of the operations is line N + 2 of the file (line 1 is the header). */
export function BulkResults({ succeeded, failed, results, title }: { succeeded: number; failed: number; results: BulkItemResult[]; title?: string }) {
  const { t } = useTranslation("console");
  return (
    <section className="panel" aria-labelledby="done-title">
      <h2 id="done-title">{title ?? t("bulk.done", { succeeded, failed })}</h2>
      <ListTable
        rows={results}
        rowKey={(r) => String(r.index)}
        caption={t("bulk.results")}
        columns={[
          { header: t("bulk.lineHeader"), cell: (r) => r.index + 2 },
          { header: t("bulk.op"), cell: (r) => <code>{r.op}</code> },
          { header: t("common.status"), cell: (r) => t(`bulk.status.${r.status}`) },
          { header: t("bulk.detail"), cell: (r) => r.user?.email ?? r.error?.message ?? "" },
        ]}
      />
    </section>
  );
}
