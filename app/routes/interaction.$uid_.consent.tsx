import { data, redirect, type ActionFunctionArgs } from "@remix-run/node";
import { passGate } from "~/.server/sign-in/door";
import { NO_STORE } from "~/.server/sign-in/page";
import { recordConsent, recordInteractionResult } from "~/.server/oidc/provider/interaction-results";

/** POST /interaction/:uid/consent: allow (the grant is stored and remembered) or deny. */
export async function loader({ params }: ActionFunctionArgs) {
  return redirect(`/interaction/${params.uid}`);
}

export async function action(args: ActionFunctionArgs) {
  const uid = args.params.uid!;
  const gate = await passGate(args);
  // Whatever is wrong (expired, a stale form, no consent to give), the login page says what comes next.
  if (!gate.open || gate.context.interaction.prompt.name !== "consent") return redirect(`/interaction/${uid}`, { headers: NO_STORE });
  const { tenant, interaction } = gate.context;
  const decision = gate.form.get("decision");
  if (decision === "allow") return redirect(await recordConsent(tenant.provider, interaction), { headers: NO_STORE });
  if (decision === "deny") {
    const to = await recordInteractionResult(interaction, { error: "access_denied", error_description: "The user did not allow access." });
    return redirect(to, { headers: NO_STORE });
  }
  return data({ error: "unknown decision" }, { status: 422, headers: NO_STORE });
}
