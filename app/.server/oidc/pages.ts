import type { ErrorOut, KoaContextWithOIDC } from "oidc-provider";

/**
 * The few pages oidc-provider renders itself (protocol errors shown to a person, and the
 * RP-initiated logout confirmation). Everything interpolated is escaped; error details meant
 * for developers (error_detail) are never shown.
 */
const escape = (value: unknown) =>
  String(value ?? "").replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c]!);

function page(title: string, body: string): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escape(title)}</title>
<style>
body{margin:0;font-family:system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;background:#f4f5f8;color:#1b1e24}
main{min-height:100vh;display:grid;place-items:center;padding:1.5rem}
section{max-width:28rem;width:100%;background:#fff;border-radius:10px;padding:2rem;box-shadow:0 1px 3px rgb(0 0 0/.12)}
h1{margin-top:0;font-size:1.5rem} button{font:inherit;padding:.6rem 1.2rem;border-radius:6px;border:1px solid #3b5bdb;background:#3b5bdb;color:#fff;cursor:pointer}
button.secondary{background:#fff;color:#3b5bdb} code{word-break:break-all}
</style></head><body><main><section>${body}</section></main></body></html>`;
}

export async function renderProviderError(ctx: KoaContextWithOIDC, out: ErrorOut): Promise<void> {
  ctx.type = "html";
  ctx.body = page(
    "Sign-in error",
    `<h1>We could not complete the sign-in</h1>
<p>${escape(out.error_description ?? "The request was not valid.")}</p>
<p>Error: <code>${escape(out.error)}</code></p>
<p>Go back to the application and start again.</p>`,
  );
}

export async function renderLogoutConfirmation(ctx: KoaContextWithOIDC, form: string): Promise<void> {
  ctx.type = "html";
  // `form` is built by oidc-provider (action and hidden xsrf field); the buttons submit it.
  ctx.body = page(
    "Sign out",
    `<h1>Sign out?</h1>
<p>Do you want to sign out of this organization on this device?</p>
${form}
<p style="display:flex;gap:.75rem">
<button autofocus type="submit" form="op.logoutForm" name="logout" value="yes">Yes, sign out</button>
<button class="secondary" type="submit" form="op.logoutForm">No, stay signed in</button>
</p>`,
  );
}

export async function renderLogoutSuccess(ctx: KoaContextWithOIDC): Promise<void> {
  ctx.type = "html";
  ctx.body = page("Signed out", `<h1>You are signed out</h1><p>You can close this window.</p>`);
}
