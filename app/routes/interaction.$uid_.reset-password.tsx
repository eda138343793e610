import { data, type MetaFunction, redirect, type ActionFunctionArgs, type LoaderFunctionArgs } from "@remix-run/node";
import { pageTitle } from "~/i18n/page-title";
import { useLoaderData, useActionData } from "@remix-run/react";
import { UnknownResetLink } from "~/components/password-changed";
import { GateRefusalPage, isGateRefusal } from "~/components/gate-refusal";
import { legacyResetLinkSlug } from "~/.server/auth/password-reset";
import { brandingForInteraction } from "~/.server/branding/pages";
import { resolveLanguage } from "~/.server/i18n";
import { passGate, visitorContext } from "~/.server/sign-in/door";
import { interactionHeaders, NO_STORE } from "~/.server/sign-in/page";

export const meta: MetaFunction<typeof loader> = ({ data }) => [{ title: pageTitle(data?.language, (m) => m.reset.problemTitle) }, { name: "robots", content: "noindex" }];
export const headers = interactionHeaders;

/**
 * /interaction/:uid/reset-password?token=…: the address of reset links mailed before they named
 * their organization (they stay valid for their lifetime). It only forwards to
 * /{slug}/reset-password, which works in any browser and checks the link's client's methods; a
 * form posted here is shown again there. It is one of the spec's login-method endpoints: in the
 * browser of a sign-in whose client has no password, the method is refused first (the gate).
 */
async function forward(args: LoaderFunctionArgs | ActionFunctionArgs, endpoint: string) {
  const { request, context } = args;
  const gate = await passGate(args, { method: "password", endpoint, interaction: "forward" });
  if (!gate.open) return gate.response;
  const token = String(gate.form.get("token") ?? new URL(request.url).searchParams.get("token") ?? "");
  const ctx = visitorContext(context);
  const slug = await legacyResetLinkSlug(ctx, token);
  if (!slug) {
    // The sign-in this link was asked from names the organization whose sign-in is the way onward.
    const { signIn } = await brandingForInteraction(ctx, args.params.uid ?? "");
    return data({ view: "unknown" as const, language: await resolveLanguage(request, {}), home: signIn }, { status: 400, headers: NO_STORE });
  }
  return redirect(`/${slug}/reset-password?${new URLSearchParams({ token })}`, { status: 303, headers: NO_STORE });
}

export async function loader(args: LoaderFunctionArgs) {
  return forward(args, "GET /interaction/:uid/reset-password");
}

export async function action(args: ActionFunctionArgs) {
  return forward(args, "POST /interaction/:uid/reset-password");
}

export default function LegacyResetLink() {
  const page = useLoaderData<typeof loader>();
  const shown = useActionData<typeof action>() ?? page;
  if (isGateRefusal(shown)) return <GateRefusalPage refusal={shown} />;
  return <UnknownResetLink home={shown.home} />;
}
