import { data, redirect, type ActionFunctionArgs, type LoaderFunctionArgs, type MetaFunction } from "@remix-run/node";
import { useActionData } from "@remix-run/react";
import { useLoaderData } from "@remix-run/react";
import { FederationFailurePage } from "~/components/federation";
import { continueFromCallback } from "~/.server/sign-in/flow";
import { unitOfWork } from "~/.server/sign-in/door";
import { resolveLanguage } from "~/.server/i18n";
import { brandingForSlug } from "~/.server/branding/pages";
import { interactionHeaders, NO_STORE, requestMeta } from "~/.server/sign-in/page";
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
  return answer(request, params.slug ?? "", context, new URL(request.url).searchParams);
}

/**
 * POST: the same answer as a form (`response_mode=form_post`, which Apple needs when the name or
 * email is asked for). It comes cross-site from the upstream, so it is one of the few POSTs the
 * edge guard lets in from another origin; the state it carries is its check, as for the GET.
 */
export async function action({ request, params, context }: ActionFunctionArgs) {
  const form = await request.formData();
  const search = new URLSearchParams();
  for (const [name, value] of form) if (typeof value === "string") search.set(name, value);
  return answer(request, params.slug ?? "", context, search);
}

async function answer(request: Request, slug: string, context: LoaderFunctionArgs["context"], search: URLSearchParams) {
  const meta = requestMeta(context, `${request.method} /{slug}/federation/callback`);
  const ctx = unitOfWork(context.services, meta);
  const next = await continueFromCallback(ctx, slug, search, meta.ip);
  if (next.kind === "next") return redirect(next.to, { status: 303, headers: NO_STORE });
  const end = await brandingForSlug(ctx, slug);
  const language = await resolveLanguage(request, { organizationDefault: end.defaultLocale });
  if (next.kind === "rate_limited") {
    const minutes = Math.ceil(next.retryAfterSeconds / 60);
    return data({ language, branding: end.branding, home: end.home ?? end.signIn, minutes }, { status: 429, headers: { ...NO_STORE, "Retry-After": String(next.retryAfterSeconds) } });
  }
  // No interaction, so no client whose home to offer: the organization's own start (its account page) is the way on.
  return data({ language, branding: end.branding, home: end.home ?? end.signIn, minutes: undefined }, { status: 400, headers: NO_STORE });
}

export default function FederationCallback() {
  const loaded = useLoaderData<typeof loader>();
  const posted = useActionData<typeof action>();
  const page = posted ?? loaded;
  return <FederationFailurePage branding={page.branding} reason={page.minutes ? "rate_limited" : "expired"} minutes={page.minutes} provider={null} backTo={page.home} />;
}
