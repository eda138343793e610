import type { CSSProperties, ReactNode } from "react";

export interface BrandingView {
  name: string;
  logoUrl: string | null;
  faviconUrl?: string | null;
  footerText?: string | null;
  cssVariables: Record<string, string>;
}

/**
 * The frame of every end-user page: logo or name, a heading, then the content. Without branding
 * (a link that names no known organization) the same card, plain.
 */
export function AuthCard({ branding, title, subtitle, children }: { branding: BrandingView | null; title: string; subtitle?: string; children: ReactNode }) {
  if (!branding) {
    return (
      <main className="page">
        <section className="card" aria-labelledby="page-title">
          <h1 id="page-title">{title}</h1>
          {subtitle ? <p className="muted">{subtitle}</p> : null}
          {children}
        </section>
      </main>
    );
  }
  return (
    <main className="page" style={branding.cssVariables as CSSProperties}>
      <section className="card" aria-labelledby="page-title">
        <header className="brand">
          {branding.logoUrl ? <img src={branding.logoUrl} alt={branding.name} className="brand-logo" /> : <p className="brand-name">{branding.name}</p>}
        </header>
        <h1 id="page-title">{title}</h1>
        {subtitle ? <p className="muted">{subtitle}</p> : null}
        {children}
      </section>
      {branding.footerText ? <footer className="brand-footer">{branding.footerText}</footer> : null}
    </main>
  );
}

/** A labelled input whose error is announced and tied to it (aria-describedby). */
export function Field({
  name,
  label,
  type = "text",
  autoComplete,
  defaultValue,
  error,
  autoFocus,
  required = true,
  inputMode,
  hint,
}: {
  name: string;
  label: string;
  type?: string;
  autoComplete?: string;
  defaultValue?: string;
  error?: string | undefined;
  autoFocus?: boolean;
  required?: boolean;
  /** The on-screen keyboard to offer (codes: "numeric"). */
  inputMode?: "numeric" | "text" | "email";
  /** What the field expects, shown before the first attempt (password rules). */
  hint?: string;
}) {
  const errorId = `${name}-error`;
  const hintId = `${name}-hint`;
  const describedBy = [hint ? hintId : null, error ? errorId : null].filter(Boolean).join(" ") || undefined;
  return (
    <div className="field">
      <label htmlFor={name}>{label}</label>
      <input
        id={name}
        name={name}
        type={type}
        autoComplete={autoComplete}
        defaultValue={defaultValue}
        required={required}
        autoFocus={autoFocus}
        inputMode={inputMode}
        aria-invalid={error ? true : undefined}
        aria-describedby={describedBy}
      />
      {hint ? (
        <p id={hintId} className="field-hint">
          {hint}
        </p>
      ) : null}
      {error ? (
        <p id={errorId} className="field-error" role="alert">
          {error}
        </p>
      ) : null}
    </div>
  );
}

/** A form-level message (generic login failure, rate limit, expired form). */
export function FormMessage({ tone, children }: { tone: "error" | "info"; children: ReactNode }) {
  return (
    <p className={`form-message form-message-${tone}`} role={tone === "error" ? "alert" : "status"}>
      {children}
    </p>
  );
}
