import { data, type MetaFunction, type LoaderFunctionArgs } from "@remix-run/node";
import { useLoaderData } from "@remix-run/react";
import { pageTitle } from "~/i18n/page-title";
import { PasswordChangedCard } from "~/components/password-changed";
import { resolveLanguage } from "~/.server/i18n";
import { brandingForSlug } from "~/.server/branding/pages";
import { visitorContext } from "~/.server/sign-in/door";
import { interactionHeaders, NO_STORE } from "~/.server/sign-in/page";

export const meta: MetaFunction<typeof loader> = ({ data }) => [{ title: pageTitle(data?.language, (m) => m.reset.changedTitle) }, { name: "robots", content: "noindex" }];
export const headers = interactionHeaders;

/**
 * GET /{slug}/password-changed?client=…: where a reset ends when the sign-in that asked for it is
 * not open in this browser (another device, or it expired). It changes nothing and tells nothing
 * a visitor could not know: the organization's branding and, for one of its clients, the way back
 * to that application (its registered address, never one from the request).
 */
export async function loader({ request, params, context }: LoaderFunctionArgs) {
  const search = new URL(request.url).searchParams;
  const end = await brandingForSlug(visitorContext(context), params.slug ?? "", { clientId: search.get("client") });
  const language = await resolveLanguage(request, { uiLocales: search.get("lang"), organizationDefault: end.defaultLocale });
  if (!end.branding) return data({ view: "unknown" as const, language }, { status: 404, headers: NO_STORE });
  return data({ view: "changed" as const, language, branding: end.branding, home: end.home, clientName: end.clientName }, { headers: NO_STORE });
}

export default function PasswordChanged() {
  const page = useLoaderData<typeof loader>();
  if (page.view === "unknown") return <PasswordChangedCard branding={null} home={null} clientName={null} />;
  return <PasswordChangedCard branding={page.branding} home={page.home} clientName={page.clientName} />;
}
