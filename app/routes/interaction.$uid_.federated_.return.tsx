import { data, redirect, type LoaderFunctionArgs, type MetaFunction } from "@remix-run/node";
import { useLoaderData } from "@remix-run/react";
import { FederationFailurePage } from "~/components/federation";
import { GateRefusalPage, isGateRefusal } from "~/components/gate-refusal";
import { federatedSignIn } from "~/.server/sign-in/flow";
import { passGate } from "~/.server/sign-in/door";
import { interactionHeaders, NO_STORE } from "~/.server/sign-in/page";
import { pageTitle } from "~/i18n/page-title";

export const headers = interactionHeaders;
export const meta: MetaFunction<typeof loader> = ({ data }) => [
  { title: pageTitle(data && "language" in data ? data.language : undefined, (m) => m.signIn.sso) },
  { name: "robots", content: "noindex" },
];

/**
 * GET /interaction/:uid/federated/return?code&state: where the callback sends the browser with
 * the upstream's answer, in the browser that holds the interaction (its cookie is checked by the
 * gate). The state must be the one this interaction sent; the answer is then checked and the
 * person signed in, or asked for the organization's second factor, or shown why not.
 */
export async function loader(args: LoaderFunctionArgs) {
  const gate = await passGate(args, { method: "federated", endpoint: "GET /interaction/:uid/federated/return" });
  if (!gate.open) return gate.response;
  const outcome = await federatedSignIn(gate.ctx, gate.context, {
    search: new URL(args.request.url).searchParams,
    meta: gate.meta,
    language: gate.frame.language,
  });
  if (outcome.kind === "redirect") return redirect(outcome.to, { status: 303, headers: NO_STORE });
  if (outcome.kind === "rate_limited") {
    return data(
      { view: "federation" as const, ...gate.frame, reason: "rate_limited" as const, provider: null, minutes: Math.ceil(outcome.retryAfterSeconds / 60) },
      { status: 429, headers: { ...NO_STORE, "Retry-After": String(outcome.retryAfterSeconds) } },
    );
  }
  const status = outcome.reason === "unreachable" ? 502 : outcome.reason === "expired" || outcome.reason === "invalid" ? 400 : 403;
  return data({ view: "federation" as const, ...gate.frame, reason: outcome.reason, provider: outcome.providerName, minutes: undefined }, { status, headers: NO_STORE });
}

export default function FederatedReturn() {
  const page = useLoaderData<typeof loader>();
  if (isGateRefusal(page)) return <GateRefusalPage refusal={page} />;
  if (page.view !== "federation") return null;
  return <FederationFailurePage branding={page.branding} reason={page.reason} provider={page.provider} minutes={page.minutes} backTo={`/interaction/${page.uid}`} />;
}
