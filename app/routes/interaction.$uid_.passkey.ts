import { redirect, type ActionFunctionArgs, type LoaderFunctionArgs } from "@remix-run/node";
import { closedGateJson, passGate, rateLimitedJson, signedInJson } from "~/.server/sign-in/door";
import { NO_STORE } from "~/.server/sign-in/page";
import { passkeyLoginOptions, passkeySignIn } from "~/.server/sign-in/flow";

/**
 * POST /interaction/:uid/passkey, for the login page's passkey script (decision 041):
 * `intent=options` answers the WebAuthn request options (a new challenge bound to this
 * interaction), `intent=verify` with the signed `credential` signs in and answers where the
 * browser goes next. Behind the gate of every login method: a client without `passkey` gets 403
 * (`security.login_method_disabled`) before anything else, then the CSRF token is checked.
 */
export async function loader(args: LoaderFunctionArgs) {
  const gate = await passGate(args, { method: "passkey", endpoint: "GET /interaction/:uid/passkey" });
  if (!gate.open) return gate.response;
  return redirect(`/interaction/${gate.uid}?method=passkey`, { headers: NO_STORE });
}

export async function action(args: ActionFunctionArgs) {
  const gate = await passGate(args, { method: "passkey", endpoint: "POST /interaction/:uid/passkey" });
  if (!gate.open) return closedGateJson(gate);
  if (gate.form.get("intent") === "options") {
    return Response.json({ options: await passkeyLoginOptions(gate.ctx, gate.context) }, { headers: NO_STORE });
  }
  const outcome = await passkeySignIn(gate.ctx, gate.context, { credential: gate.form.get("credential"), meta: gate.meta });
  if (outcome.kind === "signed_in") return signedInJson(outcome.redirectTo);
  if (outcome.kind === "rate_limited") return rateLimitedJson(outcome.retryAfterSeconds);
  return Response.json({ error: "failed" }, { status: 401, headers: NO_STORE });
}
