import { data, type MetaFunction, type LoaderFunctionArgs } from "@remix-run/node";
import { useLoaderData } from "@remix-run/react";
import { pageTitle } from "~/i18n/page-title";
import { PasswordChangedCard } from "~/components/password-changed";
import { applicationHome } from "~/.server/auth/application-home";
import { getClientRecord } from "~/.server/directory/clients";
import { getOrganizationBySlug } from "~/.server/directory/organizations";
import { resolveLanguage } from "~/.server/i18n";
import { brandingOf } from "~/.server/interaction/branding";
import { interactionHeaders, NO_STORE } from "~/.server/interaction/request";
import { SlugSchema } from "~/schemas/organization";

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
  const language = await resolveLanguage(request, { uiLocales: search.get("lang") });
  const { prisma } = context.services.db;
  const slug = SlugSchema.safeParse(params.slug);
  const organization = slug.success ? await getOrganizationBySlug(prisma, context.services.cache, slug.data) : null;
  if (!organization || organization.status !== "active") return data({ view: "unknown" as const, language }, { status: 404, headers: NO_STORE });
  const clientId = search.get("client") ?? "";
  const found = clientId.length > 0 && clientId.length <= 200 && !clientId.includes("\0") ? await getClientRecord(prisma, context.services.cache, clientId) : null;
  const client = found && found.organizationId === organization.id ? found : null;
  return data(
    { view: "changed" as const, language, branding: brandingOf(organization), home: applicationHome(client), clientName: client?.name ?? null },
    { headers: NO_STORE },
  );
}

export default function PasswordChanged() {
  const page = useLoaderData<typeof loader>();
  if (page.view === "unknown") return <PasswordChangedCard branding={null} home={null} clientName={null} />;
  return <PasswordChangedCard branding={page.branding} home={page.home} clientName={page.clientName} />;
}
