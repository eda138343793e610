import { createHash } from "node:crypto";
import type { KoaContextWithOIDC } from "oidc-provider";
import type { Organization } from "~/generated/prisma/client";
import { isSupportedLanguage, type Language } from "~/i18n/config";
import { brandingOf } from "../../branding/pages";
import type { Branding } from "~/schemas/branding";
import { resolveLanguage, translator } from "../../i18n";
import { accountPageOfIssuer } from "../storage/account-client";
import { codeEntryGates, limitedCodeEntries } from "../features/device-flow";
import { challengeRefusalStatus } from "../../sign-in/bot-challenge";
import { BOT_CHALLENGE_FIELD, BOT_CHALLENGE_SCRIPT_PATH, type BotChallenge } from "~/schemas/bot-challenge";
import type { ProviderPages } from "../feature";

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
label{display:block;font-weight:600;margin:1rem 0 .35rem} input[type=text]{font:inherit;font-size:1.25rem;letter-spacing:.1em;text-transform:uppercase;width:100%;box-sizing:border-box;padding:.5rem;border:1px solid #6b7280;border-radius:6px}
.error{color:#b42318;font-weight:600} .challenge-status{color:#4b5563;min-height:1.5em} .user-code{font-size:1.75rem;letter-spacing:.1em;font-weight:700}
</style></head><body><main><section>${brand}${body}</section></main></body></html>`;
}

/** The action and xsrf value of the provider's code entry form (its own form has no label and an inline handler). */
function formTarget(form: string): { action: string; xsrf: string } {
  const action = /action="([^"]*)"/.exec(form)?.[1] ?? "";
  const xsrf = /name="xsrf" value="([^"]*)"/.exec(form)?.[1] ?? "";
  // Both come from the provider already HTML-escaped (or URL-safe): decoded here, escaped again on the page.
  const decode = (value: string) => value.replace(/&amp;/g, "&").replace(/&quot;/g, '"').replace(/&#39;/g, "'").replace(/&lt;/g, "<").replace(/&gt;/g, ">");
  return { action: decode(action), xsrf: decode(xsrf) };
}

/**
 * The organization's proof-of-work challenge inside the code entry form (decision 091): the
 * hidden field with the challenge, the status line the solver script (a same-origin file,
 * admitted by `script-src 'self'`) speaks through, its texts in the person's language, and what
 * to do without JavaScript.
 */
function challengeFields(challenge: BotChallenge, t: (key: string) => string): string {
  return `<input type="hidden" name="${BOT_CHALLENGE_FIELD}" value="" data-challenge="${escape(JSON.stringify(challenge))}">
<p id="bot-challenge-status" class="challenge-status" role="status" aria-live="polite" data-checking="${escape(t("botChallenge.checking"))}" data-ready="${escape(t("botChallenge.ready"))}" data-unsupported="${escape(t("botChallenge.unsupported"))}"></p>
<noscript><p>${escape(t("botChallenge.noScript"))}</p></noscript>
<script src="${BOT_CHALLENGE_SCRIPT_PATH}" defer></script>`;
}

/** The provider's routes of RP-initiated logout: their errors are about a sign-out. */
const SIGN_OUT_ROUTES = new Set(["end_session", "end_session_confirm", "end_session_success"]);

/**
 * Whether a logout request may end the session without asking (as Keycloak does): it names a
 * registered post_logout_redirect_uri (the provider refused any other) and carries an ID token
 * (signature checked by the provider) of this very sign-in: the session's account, a client the
 * session signed in to, the session's sid for it when the token has one, and the session's
 * auth_time. Anything else keeps the question, so that a link alone cannot sign a person
 * out (decision 071).
 */
export function signsOutWithoutAsking(ctx: KoaContextWithOIDC): boolean {
  const { params, session, client } = ctx.oidc;
  const hint = (ctx.oidc.entities as { IdTokenHint?: { payload?: Record<string, unknown> } }).IdTokenHint?.payload;
  if (!hint || !client || !session?.accountId || typeof params?.post_logout_redirect_uri !== "string") return false;
  if (hint.sub !== session.accountId || hint.aud !== client.clientId) return false;
  if (!session.authorizations?.[client.clientId]) return false;
  if (hint.sid !== undefined && hint.sid !== session.sidFor(client.clientId)) return false;
  // The sign-in the token was issued for: another browser's, or an earlier one in this browser, differs.
  const loginTs = session.authTime();
  return typeof hint.auth_time === "number" && hint.auth_time === loginTs;
}

/**
 * Lets one inline script run under the response's Content-Security-Policy by its hash, as
 * oidc-provider does for its own form posts.
 */
function allowInlineScript(ctx: KoaContextWithOIDC, script: string): void {
  const policy = ctx.response.get("content-security-policy");
  if (!policy) return;
  const digest = createHash("sha256").update(script).digest("base64");
  ctx.set(
    "content-security-policy",
    policy
      .split(";")
      .map((directive) => (directive.trim().startsWith("script-src ") ? `${directive.trim()} 'sha256-${digest}'` : directive.trim()))
      .join(";"),
  );
}

const SUBMIT_LOGOUT = `document.getElementById("op.logoutForm").submit();`;

/** The message key for why the code entry page is shown again (oidc-provider's re-render errors). */
function codeProblemOf(err: Error | undefined): string | undefined {
  if (!err) return undefined;
  switch (err.name) {
    case "NoCodeError":
    case "NotFoundError":
    case "AlreadyUsedError":
      return "providerPages.deviceWrongCode";
    case "ExpiredError":
      return "providerPages.deviceExpiredCode";
    case "AbortedError":
      return "providerPages.deviceAborted";
    default:
      return "providerPages.deviceFailed";
  }
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
        title: t(SIGN_OUT_ROUTES.has(ctx.oidc?.route ?? "") ? "providerPages.logoutErrorTitle" : "providerPages.errorTitle"),
        // The description is the protocol's (English, for the application's developer): a detail, not the message.
        body: `<h1>${escape(t(SIGN_OUT_ROUTES.has(ctx.oidc?.route ?? "") ? "providerPages.logoutErrorHeading" : "providerPages.errorHeading"))}</h1>
<p>${escape(t("providerPages.errorBody"))}</p>
<p>${escape(t("providerPages.errorCode"))} <code>${escape(out.error)}</code></p>${
          out.error_description ? `<details><summary>${escape(t("providerPages.errorDetails"))}</summary><p>${escape(out.error_description)}</p></details>` : ""
        }`,
      })),

    // `form` is built by oidc-provider (action and hidden xsrf field); the buttons submit it, or,
    // for a request that needs no question, the page's script does (a button without script).
    logoutSource: (ctx, form) => {
      if (signsOutWithoutAsking(ctx)) {
        allowInlineScript(ctx, SUBMIT_LOGOUT);
        return render(ctx, (t) => ({
          title: t("providerPages.logoutAutoTitle"),
          body: `<h1>${escape(t("providerPages.logoutAutoHeading"))}</h1>
<p>${escape(t("providerPages.logoutAutoBody", { organization: branding.name }))}</p>
${form.replace("</form>", '<input type="hidden" name="logout" value="yes"/></form>')}
<noscript><p class="actions"><button autofocus type="submit" form="op.logoutForm">${escape(t("providerPages.logoutAutoContinue"))}</button></p></noscript>
<script>${SUBMIT_LOGOUT}</script>`,
        }));
      }
      return render(ctx, (t) => ({
        title: t("providerPages.logoutTitle"),
        body: `<h1>${escape(t("providerPages.logoutHeading"))}</h1>
<p>${escape(t("providerPages.logoutBody", { organization: branding.name }))}</p>
${form}
<p class="actions">
<button autofocus type="submit" form="op.logoutForm" name="logout" value="yes">${escape(t("providerPages.logoutYes"))}</button>
<button class="secondary" type="submit" form="op.logoutForm">${escape(t("providerPages.logoutNo"))}</button>
</p>`,
      }));
    },

    postLogoutSuccessSource: (ctx) =>
      render(ctx, (t) => ({
        title: t("providerPages.signedOutTitle"),
        body: `<h1>${escape(t("providerPages.signedOutHeading"))}</h1>
<p>${escape(t("providerPages.signedOutBody", { organization: branding.name }))}</p>
<p><a class="button" href="${escape(account)}">${escape(t("providerPages.signedOutAccount"))}</a></p>`,
      })),

    async userCodeInputSource(ctx, form, _out, err) {
      const { action, xsrf } = formTarget(form);
      const limited = limitedCodeEntries.has(ctx.req);
      const gate = codeEntryGates.get(ctx.req);
      const challenge = gate ? await gate.challenge() : null;
      if (limited) ctx.status = 429;
      else if (gate?.refused) ctx.status = challengeRefusalStatus(gate.refused);
      const problem = limited ? "providerPages.deviceRateLimited" : gate?.refused ? `botChallenge.refused.${gate.refused}` : codeProblemOf(err);
      const entered = gate?.refused ? gate.entered : (err as { userCode?: unknown } | undefined)?.userCode;
      await render(ctx, (t) => ({
        title: t("providerPages.deviceTitle"),
        body: `<h1>${escape(t("providerPages.deviceHeading"))}</h1>
<p>${escape(t("providerPages.deviceBody", { organization: branding.name }))}</p>
${problem ? `<p id="user-code-problem" class="error" role="alert">${escape(t(problem))}</p>` : ""}
<form id="op.deviceInputForm" method="post" action="${escape(action)}">
<input type="hidden" name="xsrf" value="${escape(xsrf)}">
<label for="user_code">${escape(t("providerPages.deviceCodeLabel"))}</label>
<input id="user_code" type="text" name="user_code" value="${escape(typeof entered === "string" && !limited ? entered : "")}" autocomplete="one-time-code" autocapitalize="characters" spellcheck="false" required autofocus${problem ? ' aria-invalid="true" aria-describedby="user-code-problem"' : ""}>
${challenge ? challengeFields(challenge, t) : ""}<p class="actions"><button type="submit">${escape(t("providerPages.deviceContinue"))}</button></p>
</form>`,
      }));
    },

    // `form` is the provider's (action, xsrf, the code, confirm=yes); the buttons submit it.
    userCodeConfirmSource: (ctx, form, client, _deviceInfo, userCode) =>
      render(ctx, (t) => ({
        title: t("providerPages.deviceConfirmTitle"),
        body: `<h1>${escape(t("providerPages.deviceConfirmHeading"))}</h1>
<p>${escape(t("providerPages.deviceConfirmBody", { client: client.clientName ?? client.clientId, organization: branding.name }))}</p>
<p class="user-code"><code>${escape(userCode)}</code></p>
<p>${escape(t("providerPages.deviceConfirmWarning"))}</p>
${form}
<p class="actions">
<button autofocus type="submit" form="op.deviceConfirmForm">${escape(t("providerPages.deviceConfirmYes"))}</button>
<button class="secondary" type="submit" form="op.deviceConfirmForm" name="abort" value="yes">${escape(t("providerPages.deviceConfirmNo"))}</button>
</p>`,
      })),

    successSource: (ctx) =>
      render(ctx, (t) => ({
        title: t("providerPages.deviceDoneTitle"),
        body: `<h1>${escape(t("providerPages.deviceDoneHeading"))}</h1>
<p>${escape(t("providerPages.deviceDoneBody", { client: ctx.oidc.client?.clientName ?? ctx.oidc.client?.clientId ?? "", organization: branding.name }))}</p>`,
      })),
  };
}
