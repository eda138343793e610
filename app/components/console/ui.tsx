import { Form, Link, useRouteLoaderData } from "@remix-run/react";
import { useEffect, useState, type ReactNode } from "react";
import { useTranslation } from "react-i18next";

/** The console layout's loader data every page may use (the CSRF token above all). */
export interface ConsoleFrame {
  language: string;
  email: string;
  csrf: string;
  permissions: string[];
}

export function useConsoleFrame(): ConsoleFrame {
  // The service console's frame, or an organization's own console's (decision 090).
  const service = useRouteLoaderData<ConsoleFrame>("routes/console");
  const organization = useRouteLoaderData<ConsoleFrame>("routes/$slug.console");
  const frame = service ?? organization;
  if (!frame) throw new Error("console pages render inside routes/console or routes/$slug.console");
  return frame;
}

export function Csrf() {
  return <input type="hidden" name="csrf" value={useConsoleFrame().csrf} />;
}

/** A form posting to the page's action with the CSRF token and an `intent`. */
export function ActionForm({ intent, children, className, fields = {} }: { intent: string; children: ReactNode; className?: string; fields?: Record<string, string> }) {
  return (
    <Form method="post" reloadDocument className={className}>
      <Csrf />
      <input type="hidden" name="intent" value={intent} />
      {Object.entries(fields).map(([name, value]) => (
        <input key={name} type="hidden" name={name} value={value} />
      ))}
      {children}
    </Form>
  );
}

/**
 * A destructive action behind a confirmation: the first button only opens the question (a
 * disclosure, so it works with the keyboard and without JavaScript); the second one posts.
 */
export function ConfirmAction(props: { intent: string; label: string; question: string; danger?: boolean; fields?: Record<string, string> }) {
  const { intent, label, question, danger = false, fields } = props;
  const { t } = useTranslation("console");
  return (
    <details className="confirm">
      <summary className={`button button-inline${danger ? " button-danger" : " button-secondary"}`}>{label}</summary>
      <div className="confirm-panel" role="group" aria-label={t("orgs.confirmTitle")}>
        <p>{question}</p>
        <ActionForm intent={intent} fields={fields}>
          <button type="submit" className={`button button-inline${danger ? " button-danger" : ""}`}>
            {t("common.confirm")}: {label}
          </button>
        </ActionForm>
      </div>
    </details>
  );
}

export function TextField(props: { name: string; label: string; defaultValue?: string; error?: string | undefined; hint?: string; required?: boolean; onChange?: (value: string) => void; status?: ReactNode; type?: "text" | "date" | "email"; suggestions?: readonly string[] }) {
  const { name, label, defaultValue, error, hint, required = false, onChange, status, type = "text", suggestions } = props;
  const described = [hint ? `${name}-hint` : "", error ? `${name}-error` : "", status ? `${name}-status` : ""].filter(Boolean).join(" ") || undefined;
  return (
    <div className="field">
      <label htmlFor={name}>{label}</label>
      <input
        id={name}
        name={name}
        type={type}
        defaultValue={defaultValue}
        required={required}
        aria-invalid={error ? true : undefined}
        aria-describedby={described}
        onChange={onChange ? (e) => onChange(e.currentTarget.value) : undefined}
        list={suggestions ? `${name}-suggestions` : undefined}
      />
      {suggestions ? (
        <datalist id={`${name}-suggestions`}>
          {suggestions.map((value) => (
            <option key={value} value={value} />
          ))}
        </datalist>
      ) : null}
      {hint ? <p id={`${name}-hint`} className="hint">{hint}</p> : null}
      {status ? <p id={`${name}-status`} className="hint" aria-live="polite">{status}</p> : null}
      {error ? <p id={`${name}-error`} className="field-error" role="alert">{error}</p> : null}
    </div>
  );
}

export function CheckboxGroup(props: { name: string; legend: string; options: Array<{ value: string; label: string }>; checked: readonly string[]; error?: string | undefined }) {
  const { name, legend, options, checked, error } = props;
  return (
    <fieldset className="field" aria-describedby={error ? `${name}-error` : undefined}>
      <legend>{legend}</legend>
      {options.map((o) => (
        <label key={o.value} className="check">
          <input type="checkbox" name={name} value={o.value} defaultChecked={checked.includes(o.value)} /> {o.label}
        </label>
      ))}
      {error ? <p id={`${name}-error`} className="field-error" role="alert">{error}</p> : null}
    </fieldset>
  );
}

export function SelectField(props: { name: string; label: string; options: Array<{ value: string; label: string }>; defaultValue: string; error?: string | undefined; hint?: string }) {
  const { name, label, options, defaultValue, error, hint } = props;
  const described = [hint ? `${name}-hint` : "", error ? `${name}-error` : ""].filter(Boolean).join(" ") || undefined;
  return (
    <div className="field">
      <label htmlFor={name}>{label}</label>
      <select id={name} name={name} defaultValue={defaultValue} aria-invalid={error ? true : undefined} aria-describedby={described}>
        {options.map((o) => (
          <option key={o.value} value={o.value}>{o.label}</option>
        ))}
      </select>
      {hint ? <p id={`${name}-hint`} className="hint">{hint}</p> : null}
      {error ? <p id={`${name}-error`} className="field-error" role="alert">{error}</p> : null}
    </div>
  );
}

export function Notice({ kind, children }: { kind: "error" | "info"; children: ReactNode }) {
  return <div className={`form-message form-message-${kind}`} role={kind === "error" ? "alert" : "status"}>{children}</div>;
}

/** A horizontal bar chart as a table: readable by screen readers, drawn with CSS only. */
export function BarChart({ caption, rows }: { caption: string; rows: Array<{ label: string; value: number }> }) {
  const max = Math.max(1, ...rows.map((r) => r.value));
  return (
    <table className="chart">
      <caption>{caption}</caption>
      <tbody>
        {rows.map((r) => (
          <tr key={r.label}>
            <th scope="row">{r.label}</th>
            <td>
              <span className="bar" style={{ width: `${Math.round((r.value / max) * 100)}%` }} aria-hidden="true" />
              <span className="bar-value">{r.value}</span>
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

/** Cursor paging: "first page" and "next page" links keeping the other query parameters. */
export function CursorPager({ search, cursor }: { search: string; cursor: string | undefined }) {
  const { t } = useTranslation("console");
  const params = new URLSearchParams(search);
  const hadCursor = params.has("cursor");
  params.delete("cursor");
  const first = `?${params.toString()}`;
  if (cursor) params.set("cursor", cursor);
  return (
    <nav className="pager" aria-label={t("common.pages")}>
      {hadCursor ? <Link to={first}>{t("common.first")}</Link> : null}
      {cursor ? <Link to={`?${params.toString()}`} rel="next">{t("common.next")}</Link> : null}
    </nav>
  );
}

/**
 * A submit button for long work (imports): once pressed it says that the work is running and
 * cannot be pressed twice. The page itself is replaced by the answer when the work is done.
 */
export function BusyButton({ label, busyLabel }: { label: string; busyLabel: string }) {
  const [busy, setBusy] = useState(false);
  return (
    <>
      <button
        type="submit"
        className="button button-inline"
        aria-disabled={busy || undefined}
        onClick={(event) => {
          if (busy) event.preventDefault();
          else setTimeout(() => setBusy(true), 0);
        }}
      >
        {label}
      </button>
      <p className="hint" role="status">
        {busy ? (
          <>
            {/* No value: one transaction has no honest partial progress to show. */}
            <progress aria-label={busyLabel} /> {busyLabel}
          </>
        ) : null}
      </p>
    </>
  );
}

/**
 * Copies a value to the clipboard and says so (or that it failed) to screen readers too. It
 * needs script, so it appears once the page runs it; without, the value stays text to select.
 */
export function CopyButton({ value, label }: { value: string; label: string }) {
  const { t } = useTranslation("console");
  const [status, setStatus] = useState("");
  const [scripted, setScripted] = useState(false);
  useEffect(() => setScripted(true), []);
  if (!scripted) return null;
  const copy = () =>
    navigator.clipboard.writeText(value).then(
      () => setStatus(t("common.copied")),
      () => setStatus(t("common.copyFailed")),
    );
  return (
    <>
      <button type="button" className="button button-inline button-quiet" onClick={copy}>{label}</button>
      <span className="hint" aria-live="polite">{status}</span>
    </>
  );
}

/**
 * A row's actions behind one quiet button (a disclosure: keyboard and no-JavaScript friendly),
 * so that a list is not a column of buttons. `name` says whose actions they are to screen readers.
 */
export function ActionMenu({ name, children }: { name: string; children: ReactNode }) {
  const { t } = useTranslation("console");
  return (
    <details className="menu">
      <summary className="button button-inline button-quiet">
        {t("common.actions")}
        <span className="visually-hidden">: {name}</span>
      </summary>
      <div className="menu-panel">{children}</div>
    </details>
  );
}

/**
 * "On this page": links to a long detail page's sections (anchors to their headings), so that
 * a section is one step away without scrolling through the others; no script needed.
 */
export function SectionNav({ sections }: { sections: ReadonlyArray<{ id: string; label: string } | null> }) {
  const { t } = useTranslation("console");
  return (
    <nav aria-label={t("common.onThisPage")} className="section-nav">
      <ul>
        {sections
          .filter((s) => s !== null)
          .map((s) => (
            <li key={s.id}>
              <a href={`#${s.id}`}>{s.label}</a>
            </li>
          ))}
      </ul>
    </nav>
  );
}
