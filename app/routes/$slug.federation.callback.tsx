import { data, redirect, type LoaderFunctionArgs, type MetaFunction } from "@remix-run/node";
import { useLoaderData } from "@remix-run/react";
import { FederationFailurePage } from "~/components/federation";
import { continueFromCallback } from "~/.server/federation/sign-in";
import { resolveLanguage } from "~/.server/i18n";
import { brandingForSlug } from "~/.server/interaction/branding";
import { interactionHeaders, NO_STORE, requestMeta } from "~/.server/interaction/request";
import { pageTitle } from "~/i18n/page-title";

export const headers = interactionHeaders;
export const meta: MetaFunction<typeof loader> = ({ data }) => [{ title: pageTitle(data?.language, (m) => m.signIn.sso) }, { name: "robots", content: "noindex" }];

/**
 * GET {BASE_URL}/{slug}/federation/callback: the redirect URI registered at upstream providers
 * (decision 046). It sends the browser on to the interaction the state belongs to; an unknown,
 * used or expired state gets a page that says so, branded for the organization (429 once the
 * client address has failed too often).
 */
export async function loader({ request, params, context }: LoaderFunctionArgs) {
  const search = new URL(request.url).searchParams;
  const next = await continueFromCallback(context.services, params.slug ?? "", search, requestMeta(context, "GET /{slug}/federation/callback").ip);
  if (next.kind === "next") return redirect(next.to, { status: 303, headers: NO_STORE });
  const end = await brandingForSlug(context.services, params.slug ?? "");
  const language = await resolveLanguage(request, { organizationDefault: end.defaultLocale });
  if (next.kind === "rate_limited") {
    const minutes = Math.ceil(next.retryAfterSeconds / 60);
    return data({ language, branding: end.branding, home: end.home, minutes }, { status: 429, headers: { ...NO_STORE, "Retry-After": String(next.retryAfterSeconds) } });
  }
  return data({ language, branding: end.branding, home: end.home, minutes: undefined }, { status: 400, headers: NO_STORE });
}

export default function FederationCallback() {
  const page = useLoaderData<typeof loader>();
  return <FederationFailurePage branding={page.branding} reason={page.minutes ? "rate_limited" : "expired"} minutes={page.minutes} provider={null} backTo={page.home} />;
}
