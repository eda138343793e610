import { data, redirect, type ActionFunctionArgs } from "@remix-run/node";
import { loadInteractionPage, NO_STORE } from "~/.server/interaction/request";
import { recordConsent, recordInteractionResult } from "~/.server/oidc/interaction-results";
import { readForm } from "~/.server/http/form";

/** POST /interaction/:uid/consent: allow (the grant is stored and remembered) or deny. */
export async function loader({ params }: ActionFunctionArgs) {
  return redirect(`/interaction/${params.uid}`);
}

export async function action({ request, params, context }: ActionFunctionArgs) {
  const uid = params.uid!;
  const loaded = await loadInteractionPage(request, context, uid);
  if (!loaded.ok || loaded.context.interaction.prompt.name !== "consent") return redirect(`/interaction/${uid}`, { headers: NO_STORE });
  const form = await readForm(request);
  if (!context.services.csrf.verify(uid, form.get("csrf"))) return redirect(`/interaction/${uid}`, { headers: NO_STORE });
  const { tenant, interaction } = loaded.context;
  if (form.get("decision") === "allow") return redirect(await recordConsent(tenant.provider, interaction), { headers: NO_STORE });
  if (form.get("decision") === "deny") {
    const to = await recordInteractionResult(interaction, { error: "access_denied", error_description: "The user did not allow access." });
    return redirect(to, { headers: NO_STORE });
  }
  return data({ error: "unknown decision" }, { status: 422, headers: NO_STORE });
}
