import { data, type LoaderFunctionArgs, type MetaFunction } from "@remix-run/node";
import { Form, isRouteErrorResponse, NavLink, Outlet, useLoaderData, useLocation, useRouteError } from "@remix-run/react";
import type { CSSProperties } from "react";
import { useTranslation } from "react-i18next";
import { consoleFrame } from "~/.server/console/frame";
import { consoleHeaders, NO_STORE } from "~/.server/console/page";
import { SUPPORTED_LANGUAGES } from "~/i18n/config";

export const headers = consoleHeaders;
export const meta: MetaFunction = () => [{ title: "Porta console" }, { name: "robots", content: "noindex" }];

export async function loader(args: LoaderFunctionArgs) {
  return data(await consoleFrame(args), { headers: NO_STORE });
}

/** Each area with the permission that reading it needs: the nav shows what this admin may open. */
const NAV = [
  { to: "/console", key: "dashboard", end: true, permission: "admin:stats:read" },
  { to: "/console/organizations", key: "organizations", end: false, permission: "admin:org:read" },
  { to: "/console/keys", key: "keys", end: false, permission: "admin:key:read" },
  { to: "/console/sessions", key: "sessions", end: false, permission: "admin:session:read" },
  { to: "/console/mail", key: "mail", end: false, permission: "admin:mail:read" },
  { to: "/console/imports", key: "imports", end: false, permission: "admin:import:write" },
  { to: "/console/config", key: "config", end: false, permission: "admin:config:read" },
  { to: "/console/audit", key: "audit", end: false, permission: "admin:audit:read" },
] as const;

/** Each language named in itself, so that a person who cannot read the current one finds theirs. */
const LANGUAGE_NAMES: Record<(typeof SUPPORTED_LANGUAGES)[number], string> = { en: "English", de: "Deutsch" };

function LanguageSwitch({ current, csrf }: { current: string; csrf: string }) {
  const { t } = useTranslation("console");
  const { pathname, search } = useLocation();
  return (
    <Form method="post" action="/console/language" reloadDocument className="language-switch" aria-label={t("language.label")}>
      <input type="hidden" name="csrf" value={csrf} />
      <input type="hidden" name="returnTo" value={pathname + search} />
      {SUPPORTED_LANGUAGES.filter((l) => l !== current).map((l) => (
        <button key={l} type="submit" name="language" value={l} lang={l} className="button button-inline button-secondary">
          {LANGUAGE_NAMES[l]}
        </button>
      ))}
    </Form>
  );
}

/** The areas this admin may open; rendered twice (a row on wide screens, a menu on a phone), one shown at a time. */
function ConsoleNav({ permissions }: { permissions: readonly string[] }) {
  const { t } = useTranslation("console");
  return (
    <nav aria-label={t("nav.label")} className="console-nav">
      <ul>
        {NAV.filter((item) => item.key === "dashboard" || permissions.includes(item.permission)).map((item) => (
          <li key={item.key}>
            <NavLink to={item.to} end={item.end} prefetch="none">{t(`nav.${item.key}`)}</NavLink>
          </li>
        ))}
      </ul>
    </nav>
  );
}

export default function ConsoleLayout() {
  const frame = useLoaderData<typeof loader>();
  const { t } = useTranslation("console");
  // A new page closes the menus (they are disclosures; the layout itself is not remounted).
  const { key } = useLocation();
  return (
    <div className="console" style={frame.branding.cssVariables as CSSProperties}>
      <a className="skip-link" href="#main">{t("skip")}</a>
      <header className="console-header">
        <p className="console-brand">
          {frame.branding.logoUrl ? <img src={frame.branding.logoUrl} alt="" className="brand-logo" /> : null}
          <span>{frame.branding.name}</span>
        </p>
        <div className="console-nav-wide">
          <ConsoleNav permissions={frame.permissions} />
        </div>
        <details className="menu console-nav-phone" key={`nav-${key}`}>
          <summary className="button button-inline button-secondary">{t("nav.menu")}</summary>
          <div className="menu-panel menu-panel-start">
            <ConsoleNav permissions={frame.permissions} />
          </div>
        </details>
        <details className="menu console-account" key={`account-${key}`}>
          <summary className="button button-inline button-quiet">
            <span className="visually-hidden">{t("nav.account")}: </span>
            <span className="console-account-email">{frame.email}</span>
          </summary>
          <div className="menu-panel">
            <p className="hint">{t("signedInAs", { email: frame.email })}</p>
            <LanguageSwitch current={frame.language} csrf={frame.csrf} />
            <Form method="post" action="/console/sign-out" reloadDocument>
              <input type="hidden" name="csrf" value={frame.csrf} />
              <button type="submit" className="button button-inline button-secondary">{t("signOut")}</button>
            </Form>
          </div>
        </details>
      </header>
      <main id="main" className="console-main" tabIndex={-1}>
        <Outlet />
      </main>
      <footer className="console-footer">
        <p>{t("footer.release", { release: frame.release })}</p>
      </footer>
    </div>
  );
}

export function ErrorBoundary() {
  const error = useRouteError();
  const { t } = useTranslation("console");
  const status = isRouteErrorResponse(error) ? error.status : 500;
  const csrf = isRouteErrorResponse(error) && (error.data as { message?: string } | null)?.message === "csrf";
  const text = csrf ? t("error.csrf") : status === 404 ? t("error.notFound") : status === 403 ? t("error.forbidden") : t("error.generic");
  return (
    <main className="page">
      <section className="card" aria-labelledby="error-title">
        <h1 id="error-title">{t("error.title")}</h1>
        <p>{text}</p>
        <p>
          <a href="/console">{t("nav.dashboard")}</a>
        </p>
      </section>
    </main>
  );
}
