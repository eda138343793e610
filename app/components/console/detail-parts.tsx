import { useLocation } from "@remix-run/react";
import { useTranslation } from "react-i18next";
import { ScrollTable } from "./list-table";

/**
 * Parts of the console's detail pages (client, application): inputs whose id differs from
 * their name (several forms on one page) and the conflict table.
 */
export function InputField(props: { id: string; name: string; label: string; defaultValue?: string | undefined; error?: string | undefined; hint?: string; required?: boolean; multiline?: boolean; type?: "text" | "date" | "number" }) {
  const { id, name, label, defaultValue, error, hint, required = false, multiline = false, type = "text" } = props;
  const described = [hint ? `${id}-hint` : "", error ? `${id}-error` : ""].filter(Boolean).join(" ") || undefined;
  const common = { id, name, defaultValue, required, "aria-invalid": error ? true : undefined, "aria-describedby": described };
  return (
    <div className="field">
      <label htmlFor={id}>{label}</label>
      {multiline ? <textarea rows={3} {...common} /> : <input type={type} {...common} />}
      {hint ? <p id={`${id}-hint`} className="hint">{hint}</p> : null}
      {error ? <p id={`${id}-error`} className="field-error" role="alert">{error}</p> : null}
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
