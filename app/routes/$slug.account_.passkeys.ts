import type { ActionFunctionArgs } from "@remix-run/node";
import { openAccountPage } from "~/.server/account/page";
import { addAccountPasskey, beginAccountPasskey } from "~/.server/account/passkeys";
import { stepUpUrl } from "~/.server/account/session";
import { NO_STORE } from "~/.server/sign-in/page";

/**
 * POST /{slug}/account/passkeys, for the account page's passkey script (decision 041):
 * `intent=options` answers the WebAuthn creation options (a challenge bound to this browser's
 * session), `intent=register` with the `credential` and its `name` stores the passkey. JSON
 * answers; a sign-in that is too old answers `step_up` with where to sign in again.
 */
export async function action(args: ActionFunctionArgs) {
  const page = await openAccountPage(args, "overview");
  if (!page.open) return Response.json({ error: "expired" }, { status: 403, headers: NO_STORE });
  const { services } = args.context;
  const { access, form, meta, ctx } = page;
  const outcome =
    form.get("intent") === "options"
      ? await beginAccountPasskey(ctx, access)
      : await addAccountPasskey(ctx, access, { credential: form.get("credential"), name: String(form.get("name") ?? ""), meta });
  if (outcome.ok) return Response.json("options" in outcome ? { options: outcome.options } : { added: outcome.passkey.id }, { headers: NO_STORE });
  if (outcome.reason === "step_up") {
    return Response.json({ error: "step_up", stepUpUrl: stepUpUrl(services.config.baseUrl, access, page.frame.language, "overview") }, { status: 403, headers: NO_STORE });
  }
  return Response.json({ error: outcome.reason }, { status: outcome.reason === "limit" ? 409 : 422, headers: NO_STORE });
}
