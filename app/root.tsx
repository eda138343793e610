import { Links, Meta, Outlet, Scripts, ScrollRestoration, isRouteErrorResponse, useRouteError } from "@remix-run/react";
import type { ReactNode } from "react";
import { useTranslation } from "react-i18next";
import { BrandFavicon } from "./components/brand-favicon";
import { useNonce } from "./components/nonce";
import { useResponseStatus } from "./components/response-status";
import "./styles/app.css";

/**
 * Where a page's scroll position is kept. A link to a section of the page (`#id`, the console's
 * "On this page") makes a history entry without state, which the router keys "default" on every
 * page alike: one page's position at its section was then restored on another page's section
 * link instead of scrolling to that section. Such entries are keyed by page and section.
 */
const scrollKey = (location: { key: string; pathname: string; hash: string }) =>
  location.key === "default" && location.hash ? `${location.pathname}${location.hash}` : location.key;

export function Layout({ children }: { children: ReactNode }) {
  const nonce = useNonce();
  const { i18n } = useTranslation();
  return (
    <html lang={i18n.language} dir={i18n.dir(i18n.language)}>
      <head>
        <meta charSet="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <Meta />
        <Links />
        <BrandFavicon />
      </head>
      <body>
        {children}
        <ScrollRestoration nonce={nonce} getKey={scrollKey} />
        <Scripts nonce={nonce} />
      </body>
    </html>
  );
}

export default function App() {
  return <Outlet />;
}

export function ErrorBoundary() {
  const error = useRouteError();
  const responseStatus = useResponseStatus();
  const status = isRouteErrorResponse(error) ? error.status : (responseStatus ?? 500);
  const title = status === 404 ? "Page not found" : status === 503 ? "Try again shortly" : "Something went wrong";
  const text =
    status === 404
      ? "There is nothing at this address."
      : status === 503
        ? "Porta cannot reach its database right now. Nothing was changed; reload this page in a few seconds."
        : "Porta could not complete this request. Try again, or start again from your application.";
  return (
    <main className="page">
      <section className="card" aria-labelledby="error-title">
        <h1 id="error-title">{title}</h1>
        <p>{text}</p>
      </section>
    </main>
  );
}
