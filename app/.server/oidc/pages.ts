import type { ErrorOut, KoaContextWithOIDC } from "oidc-provider";
import type { Organization } from "~/generated/prisma/client";
import { isSupportedLanguage, type Language } from "~/i18n/config";
import { brandingOf, type Branding } from "../interaction/branding";
import { resolveLanguage, translator } from "../i18n";
import { accountPageOfIssuer } from "./account-client";

/**
 * The few pages oidc-provider renders itself: a protocol error shown to a person, the
 * RP-initiated logout confirmation and its "signed out" page. Like every other end-user page they
 * wear the organization's branding and speak the person's language (the request's `ui_locales`,
 * then the browser's, then the organization's default). Everything interpolated is escaped;
 * error details meant for developers (error_detail) are never shown.
 */
const escape = (value: unknown) =>
  String(value ?? "").replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c]!);

/** The branding's colours come through brandingOf's checks (hex colours only), so they cannot leave the declaration. */
function cssVariables(branding: Branding): string {
  return Object.entries(branding.cssVariables)
    .map(([name, value]) => `${name}:${value}`)
    .join(";");
}

function page(language: Language, branding: Branding, title: string, body: string): string {
  const brand = branding.logoUrl
    ? `<img class="brand" src="${escape(branding.logoUrl)}" alt="${escape(branding.name)}">`
    : `<p class="brand">${escape(branding.name)}</p>`;
  return `<!doctype html>
<html lang="${language}"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex">
<title>${escape(title)} · ${escape(branding.name)}</title>
<style>
:root{--porta-primary:#3b5bdb;--porta-bg:#f4f5f8;--porta-text:#1b1e24;${cssVariables(branding)}}
body{margin:0;font-family:system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;background:var(--porta-bg);color:var(--porta-text)}
main{min-height:100vh;display:grid;place-items:center;padding:1.5rem;box-sizing:border-box}
section{max-width:28rem;width:100%;box-sizing:border-box;background:#fff;color:#1b1e24;border-radius:10px;padding:2rem;box-shadow:0 1px 3px rgb(0 0 0/.12)}
.brand{margin:0 0 1rem;font-weight:600;max-height:3rem;max-width:12rem}
h1{margin-top:0;font-size:1.5rem}
.button,button{display:inline-block;font:inherit;padding:.6rem 1.2rem;border-radius:6px;border:1px solid var(--porta-primary);background:var(--porta-primary);color:#fff;cursor:pointer;text-decoration:none}
button.secondary{background:#fff;color:#1b1e24;border-color:#6b7280}
.actions{display:flex;flex-wrap:wrap;gap:.75rem} code{word-break:break-all} details{margin:1rem 0;color:#4b5563}
</style></head><body><main><section>${brand}${body}</section></main></body></html>`;
}

export interface ProviderPages {
  renderError(ctx: KoaContextWithOIDC, out: ErrorOut): Promise<void>;
  logoutSource(ctx: KoaContextWithOIDC, form: string): Promise<void>;
  postLogoutSuccessSource(ctx: KoaContextWithOIDC): Promise<void>;
}

/** The pages of one organization's provider (built with it, so a branding change rebuilds them). */
export function providerPages(organization: Organization, issuer: string): ProviderPages {
  const branding = brandingOf(organization);
  const account = accountPageOfIssuer(issuer);

  async function languageOf(ctx: KoaContextWithOIDC): Promise<Language> {
    const params = (ctx.oidc?.params ?? {}) as { ui_locales?: unknown };
    const request = new Request(ctx.href, { headers: { "accept-language": ctx.get("accept-language") } });
    return resolveLanguage(request, { uiLocales: params.ui_locales, organizationDefault: isSupportedLanguage(organization.defaultLocale) ? organization.defaultLocale : null });
  }

  /** One page in the person's language: `content` gives its title and body from the translations. */
  async function render(ctx: KoaContextWithOIDC, content: (t: Awaited<ReturnType<typeof translator>>) => { title: string; body: string }): Promise<void> {
    const language = await languageOf(ctx);
    const { title, body } = content(await translator(language));
    ctx.type = "html";
    ctx.body = page(language, branding, title, body);
  }

  return {
    renderError: (ctx, out) =>
      render(ctx, (t) => ({
        title: t("providerPages.errorTitle"),
        // The description is the protocol's (English, for the application's developer): a detail, not the message.
        body: `<h1>${escape(t("providerPages.errorHeading"))}</h1>
<p>${escape(t("providerPages.errorBody"))}</p>
<p>${escape(t("providerPages.errorCode"))} <code>${escape(out.error)}</code></p>${
          out.error_description ? `<details><summary>${escape(t("providerPages.errorDetails"))}</summary><p>${escape(out.error_description)}</p></details>` : ""
        }`,
      })),

    // `form` is built by oidc-provider (action and hidden xsrf field); the buttons submit it.
    logoutSource: (ctx, form) =>
      render(ctx, (t) => ({
        title: t("providerPages.logoutTitle"),
        body: `<h1>${escape(t("providerPages.logoutHeading"))}</h1>
<p>${escape(t("providerPages.logoutBody", { organization: branding.name }))}</p>
${form}
<p class="actions">
<button autofocus type="submit" form="op.logoutForm" name="logout" value="yes">${escape(t("providerPages.logoutYes"))}</button>
<button class="secondary" type="submit" form="op.logoutForm">${escape(t("providerPages.logoutNo"))}</button>
</p>`,
      })),

    postLogoutSuccessSource: (ctx) =>
      render(ctx, (t) => ({
        title: t("providerPages.signedOutTitle"),
        body: `<h1>${escape(t("providerPages.signedOutHeading"))}</h1>
<p>${escape(t("providerPages.signedOutBody", { organization: branding.name }))}</p>
<p><a class="button" href="${escape(account)}">${escape(t("providerPages.signedOutAccount"))}</a></p>`,
      })),
  };
}
