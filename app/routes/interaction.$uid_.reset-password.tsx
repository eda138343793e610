import { data, type MetaFunction, redirect, type ActionFunctionArgs, type LoaderFunctionArgs } from "@remix-run/node";
import { pageTitle } from "~/i18n/page-title";
import { UnknownResetLink } from "~/components/password-changed";
import { legacyResetLinkSlug } from "~/.server/auth/password-reset";
import { readForm } from "~/.server/http/form";
import { resolveLanguage } from "~/.server/i18n";
import { interactionHeaders, NO_STORE } from "~/.server/interaction/request";

export const meta: MetaFunction<typeof loader> = ({ data }) => [{ title: pageTitle(data?.language, (m) => m.reset.problemTitle) }, { name: "robots", content: "noindex" }];
export const headers = interactionHeaders;

/**
 * /interaction/:uid/reset-password?token=…: the address of reset links mailed before they named
 * their organization (they stay valid for their lifetime). It only forwards to
 * /{slug}/reset-password, which works in any browser; a form posted here is shown again there.
 */
async function forward(request: Request, context: LoaderFunctionArgs["context"], token: string) {
  const slug = await legacyResetLinkSlug(context.services, token);
  if (!slug) return data({ language: await resolveLanguage(request, {}) }, { status: 400, headers: NO_STORE });
  return redirect(`/${slug}/reset-password?${new URLSearchParams({ token })}`, { status: 303, headers: NO_STORE });
}

export async function loader({ request, context }: LoaderFunctionArgs) {
  return forward(request, context, new URL(request.url).searchParams.get("token") ?? "");
}

export async function action({ request, context }: ActionFunctionArgs) {
  const form = await readForm(request);
  return forward(request, context, String(form.get("token") ?? new URL(request.url).searchParams.get("token") ?? ""));
}

export default function LegacyResetLink() {
  return <UnknownResetLink />;
}
