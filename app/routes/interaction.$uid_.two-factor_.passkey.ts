import type { ActionFunctionArgs } from "@remix-run/node";
import { closedGateJson, passGate, rateLimitedJson, signedInJson } from "~/.server/sign-in/door";
import { NO_STORE } from "~/.server/sign-in/page";
import { loadSecondFactorStep, passkeyAtStep, passkeyEnrollmentOptions, passkeySecondFactorOptions } from "~/.server/sign-in/flow";

/**
 * POST /interaction/:uid/two-factor/passkey, for the second-factor page's passkey script
 * (decision 041): `intent=options` answers request options for the user's own passkeys (a
 * challenge bound to this interaction), `intent=verify` checks the signed `credential` and
 * completes the sign-in; `intent=register-options` and `intent=register` (with a `name`) let a
 * person without a passkey register one where the policy requires it. Only within the step a
 * right password opened, and only when its plan offers a passkey.
 */
export async function action(args: ActionFunctionArgs) {
  const gate = await passGate(args);
  if (!gate.open) return closedGateJson(gate);
  const pending = await loadSecondFactorStep(gate.ctx, gate.context);
  if (!pending) return Response.json({ error: "expired" }, { status: 400, headers: NO_STORE });
  if (gate.form.get("intent") === "options") {
    const options = await passkeySecondFactorOptions(gate.ctx, gate.context, pending);
    return options ? Response.json({ options }, { headers: NO_STORE }) : Response.json({ error: "unavailable" }, { status: 403, headers: NO_STORE });
  }
  const intent = gate.form.get("intent");
  if (intent === "register-options") {
    const options = await passkeyEnrollmentOptions(gate.ctx, gate.context, pending);
    return options ? Response.json({ options }, { headers: NO_STORE }) : Response.json({ error: "unavailable" }, { status: 403, headers: NO_STORE });
  }
  const credential = gate.form.get("credential");
  const outcome = await passkeyAtStep(gate.ctx, gate.context, pending, {
    credential,
    meta: gate.meta,
    enroll: intent === "register" ? { name: String(gate.form.get("name") ?? "") } : null,
  });
  if (outcome.kind === "signed_in") return signedInJson(outcome.redirectTo);
  if (outcome.kind === "not_offered") return Response.json({ error: "unavailable" }, { status: 403, headers: NO_STORE });
  if (outcome.kind === "rate_limited") return rateLimitedJson(outcome.retryAfterSeconds);
  return Response.json({ error: "failed" }, { status: 401, headers: NO_STORE });
}
