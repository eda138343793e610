import { data, redirect, type AppLoadContext } from "@remix-run/node";
import type { Language } from "~/i18n/config";
import { SlugSchema } from "~/schemas/organization";
import { anonymousActor, userActor, type RequestMeta } from "../auth/actors";
import { readContext, stagedContext, type CollaboratorName, type StagedContext } from "../context";
import { readForm } from "../http/form";
import { resolveLanguage } from "../i18n";
import { brandingOf } from "../branding/pages";
import type { Branding } from "~/schemas/branding";
import { NO_STORE } from "../sign-in/page";
import { accountSignInUrl, readAccountAccess, stepUpUrl, verifyAccountCsrf, type AccountReturn, type SignedIn } from "./session";

/**
 * The front door of every account page, as `passGate` is for the sign-in pages: who is signed
 * in (else off to the organization's sign-in, or a plain 404 for an unknown organization), the
 * page's language (the person's own choice first) and branding, and for a POST the form with
 * its CSRF token checked against this browser's session.
 */
export interface AccountFrame {
  language: Language;
  branding: Branding;
  csrf: string;
  slug: string;
}

export interface OpenAccountPage {
  open: true;
  access: SignedIn;
  frame: AccountFrame;
  form: FormData;
  meta: RequestMeta;
  /** What the page's services read and write with, as the signed-in person: reads outside a transaction, writes in one. */
  ctx: StagedContext<CollaboratorName>;
}

export interface ClosedAccountPage {
  open: false;
  response: Response | ReturnType<typeof data>;
}

interface PageArgs {
  request: Request;
  params: { slug?: string };
  context: AppLoadContext;
}

const metaOf = (context: AppLoadContext): RequestMeta => ({ ip: context.req.ip ?? null, requestId: context.requestId });

/** The context an account service runs with for `userId` (the signed-in person, or the owner of an email-change link). */
export const accountContext = (context: AppLoadContext, userId: string): StagedContext<CollaboratorName> => stagedContext(context.services, userActor(userId, metaOf(context)));

/** For reads before anyone is known (the link of an email change, the session at the organization). */
export const anonymousAccountContext = (context: AppLoadContext) => readContext(context.services, anonymousActor(metaOf(context)));

export async function openAccountPage({ request, params, context }: PageArgs, returnTo: AccountReturn): Promise<OpenAccountPage | ClosedAccountPage> {
  const { services, req, res } = context;
  const slug = SlugSchema.safeParse(params.slug);
  const access = slug.success ? await readAccountAccess(anonymousAccountContext(context), req, res, slug.data) : ({ status: "unknown" } as const);
  if (access.status === "unknown") {
    const language = await resolveLanguage(request, {});
    return { open: false, response: data({ view: "unknown" as const, language }, { status: 404, headers: NO_STORE }) };
  }
  const orgSlug = access.organization.slug;
  if (access.status === "signed_out") {
    const uiLocales = new URL(request.url).searchParams.get("lang") ?? undefined;
    return { open: false, response: redirect(accountSignInUrl(services.config.baseUrl, orgSlug, { returnTo, uiLocales }), { headers: NO_STORE }) };
  }
  const language = await resolveLanguage(request, { uiLocales: access.user.locale, organizationDefault: access.organization.defaultLocale });
  const frame: AccountFrame = { language, branding: brandingOf(access.organization), csrf: access.csrf, slug: orgSlug };
  const form = request.method === "POST" ? await readForm(request) : new FormData();
  if (request.method === "POST" && !verifyAccountCsrf(services.csrf, access, form.get("csrf"))) {
    return { open: false, response: data({ view: "csrf" as const, ...frame }, { status: 403, headers: NO_STORE }) };
  }
  return { open: true, access, frame, form, meta: metaOf(context), ctx: accountContext(context, access.user.id) };
}

/** The step-up: the organization's sign-in again (prompt=login), then back to where the person was. */
export function stepUp(context: AppLoadContext, page: OpenAccountPage, returnTo: AccountReturn): Response {
  return redirect(stepUpUrl(context.services.config.baseUrl, page.access, page.frame.language, returnTo), { status: 303, headers: NO_STORE });
}

/** Dates as the account page shows them: in the page's language, in UTC (said so), the same on server and browser. */
export function formatWhen(language: Language, iso: string | Date | null): string | null {
  if (!iso) return null;
  const date = typeof iso === "string" ? new Date(iso) : iso;
  return `${new Intl.DateTimeFormat(language, { dateStyle: "medium", timeStyle: "short", timeZone: "UTC" }).format(date)} UTC`;
}
