import { data, redirect, type ActionFunctionArgs, type LoaderFunctionArgs, type MetaFunction } from "@remix-run/node";
import { useActionData } from "@remix-run/react";
import { z } from "zod";
import { EmailSchema } from "~/schemas/email";
import { FederationFailurePage } from "~/components/federation";
import { GateRefusalPage } from "~/components/gate-refusal";
import { resolveLanguage } from "~/.server/i18n";
import { startFederatedSignIn, startForEmail } from "~/.server/sign-in/flow";
import { passGate } from "~/.server/sign-in/door";
import { interactionHeaders, isAfterAction, NO_STORE } from "~/.server/sign-in/page";
import { pageTitle } from "~/i18n/page-title";

export const headers = interactionHeaders;
export const meta: MetaFunction<typeof loader> = ({ data }) => [{ title: pageTitle(data?.language, (m) => m.signIn.sso) }, { name: "robots", content: "noindex" }];

/** GET shows the login page (its loader passes the gate). */
export async function loader({ request, params, context }: LoaderFunctionArgs) {
  if (isAfterAction(context)) return { language: await resolveLanguage(request, {}) };
  return redirect(`/interaction/${params.uid}`, { headers: NO_STORE });
}

const ProviderId = z.uuid();

/**
 * POST /interaction/:uid/federated (decision 046): `provider` (a button of the login page) or
 * `email` (home-realm discovery: the provider that claims its domain) sends the browser to the
 * upstream provider. Gated as the login method `federated`: 403 before anything else when the
 * client does not have it, then the CSRF check.
 */
export async function action(args: ActionFunctionArgs) {
  const gate = await passGate(args, { method: "federated", endpoint: "POST /interaction/:uid/federated" });
  if (!gate.open) return gate.response;
  const providerId = ProviderId.safeParse(gate.form.get("provider"));
  let outcome;
  if (providerId.success) {
    outcome = await startFederatedSignIn(gate.ctx, gate.context, { providerId: providerId.data, ip: gate.meta.ip });
  } else {
    const email = EmailSchema.safeParse(gate.form.get("email"));
    if (!email.success) return redirect(`/interaction/${gate.uid}?invalid=email`, { headers: NO_STORE });
    outcome = await startForEmail(gate.ctx, gate.context, email.data, gate.meta.ip);
    if (!outcome) return redirect(`/interaction/${gate.uid}?sso=none&login_hint=${encodeURIComponent(email.data)}`, { headers: NO_STORE });
  }
  if (outcome.kind === "redirect") return redirect(outcome.to, { status: 303, headers: NO_STORE });
  if (outcome.kind === "rate_limited") {
    return data(
      { view: "federation" as const, ...gate.frame, reason: "rate_limited" as const, provider: null, minutes: Math.ceil(outcome.retryAfterSeconds / 60) },
      { status: 429, headers: { ...NO_STORE, "Retry-After": String(outcome.retryAfterSeconds) } },
    );
  }
  const provider = outcome.kind === "unreachable" ? outcome.providerName : null;
  const reason = outcome.kind === "unreachable" ? ("unreachable" as const) : ("unknown" as const);
  return data({ view: "federation" as const, ...gate.frame, reason, provider, minutes: undefined }, { status: outcome.kind === "unreachable" ? 502 : 404, headers: NO_STORE });
}

export default function FederatedStart() {
  const result = useActionData<typeof action>();
  if (!result || !("view" in result)) return null;
  if (result.view !== "federation") return <GateRefusalPage refusal={result} />;
  return <FederationFailurePage branding={result.branding} reason={result.reason} provider={result.provider} minutes={result.minutes} backTo={`/interaction/${result.uid}`} />;
}
