import { data, type MetaFunction, redirect, type ActionFunctionArgs, type LoaderFunctionArgs } from "@remix-run/node";
import { Form, useActionData, useLoaderData } from "@remix-run/react";
import { useTranslation } from "react-i18next";
import { pageTitle } from "~/i18n/page-title";
import { AuthCard, Field, FormMessage } from "~/components/auth-card";
import { BackToApplication, PasswordChangedCard, UnknownResetLink } from "~/components/password-changed";
import { applicationHome } from "~/.server/auth/application-home";
import { auditMethodRefusal } from "~/.server/sign-in/method-refusal";
import { visitorContext } from "~/.server/sign-in/door";
import { completePasswordReset, continuationAfterReset, findResetLink, resettableUserEmail, type ResetLink } from "~/.server/auth/password-reset";
import { readForm } from "~/.server/http/form";
import { resolveLanguage } from "~/.server/i18n";
import { brandingForSlug, brandingOf } from "~/.server/branding/pages";
import { accountPageUrl } from "~/.server/oidc/storage/account-client";
import { interactionHeaders, isAfterAction, NO_STORE } from "~/.server/sign-in/page";

export const meta: MetaFunction<typeof loader> = ({ data }) => [{ title: pageTitle(data?.language, (m) => m.reset.title) }, { name: "robots", content: "noindex" }];
export const headers = interactionHeaders;

/**
 * GET/POST /{slug}/reset-password?token=…: a reset link opens in any browser (decision 032). In this
 * order: the link (unknown, used, expired: a page that says which and what to do next), the
 * password method for the link's client (403 before any user lookup and CSRF), the CSRF token
 * (bound to the link), then the new password. A completed reset continues the sign-in that asked
 * when it is still open, else ends on "password changed" with the way back to the application.
 */
const csrfKey = (linkId: string) => `password-reset:${linkId}`;
const metaOf = (context: LoaderFunctionArgs["context"]) => ({ ip: context.req.ip ?? null, requestId: context.requestId });
const tokenOf = (request: Request) => new URL(request.url).searchParams.get("token") ?? "";
/** The link's `lang` (the asking sign-in's language) first, then this browser's. */
const languageOf = (request: Request) => resolveLanguage(request, { uiLocales: new URL(request.url).searchParams.get("lang") });

type Found = Extract<ResetLink, { row: unknown }>;

/** Without the application's address, the organization's own sign-in is the way onward (a new link is asked for there). */
function frame(link: Found, language: string, baseUrl: string) {
  const home = applicationHome(link.client);
  return { language, branding: brandingOf(link.organization), clientName: home ? (link.client?.name ?? null) : null, home: home ?? accountPageUrl(baseUrl, link.organization.slug) };
}

/** The page of a link that does not work; `unknownHome`: the way onward when not even the link is known (the slug's sign-in). */
function problemPage(link: ResetLink, language: string, baseUrl: string, unknownHome: string | null = null) {
  if (link.status === "unknown") return data({ view: "unknown" as const, language, home: unknownHome }, { status: 400, headers: NO_STORE });
  return data({ view: link.status === "used" ? ("used" as const) : ("expired" as const), ...frame(link, language, baseUrl) }, { status: 400, headers: NO_STORE });
}

export async function loader({ request, params, context }: LoaderFunctionArgs) {
  const language = await languageOf(request);
  const token = tokenOf(request);
  const ctx = visitorContext(context);
  const link = await findResetLink(ctx, params.slug!, token);
  if (link.status === "unknown") return problemPage(link, language, context.services.config.baseUrl, (await brandingForSlug(ctx, params.slug!)).signIn);
  if (!link.methods.includes("password")) {
    // Remix re-runs the loader after the action; only the action's refusal is audited.
    if (!isAfterAction(context)) await auditMethodRefusal(ctx, metaOf(context), refusal(link, "GET /{slug}/reset-password"));
    return data({ view: "unavailable" as const, ...frame(link, language, context.services.config.baseUrl) }, { status: 403, headers: NO_STORE });
  }
  if (link.status !== "usable") return problemPage(link, language, context.services.config.baseUrl);
  // A deactivated account's link no longer works: to its holder that is an expired link.
  if ((await resettableUserEmail(ctx, link.row)) === null) return problemPage({ ...link, status: "expired" }, language, context.services.config.baseUrl);
  const minLength = await context.services.settings.get("auth.passwordMinLength");
  return data({ view: "form" as const, ...frame(link, language, context.services.config.baseUrl), token, minLength, csrf: context.services.csrf.tokenFor(csrfKey(link.row.id)) }, { headers: NO_STORE });
}

export async function action({ request, params, context }: ActionFunctionArgs) {
  const language = await languageOf(request);
  const form = await readForm(request);
  const token = String(form.get("token") ?? "");
  const ctx = visitorContext(context);
  const link = await findResetLink(ctx, params.slug!, token);
  if (link.status === "unknown") return problemPage(link, language, context.services.config.baseUrl, (await brandingForSlug(ctx, params.slug!)).signIn);
  if (!link.methods.includes("password")) {
    await auditMethodRefusal(ctx, metaOf(context), refusal(link, "POST /{slug}/reset-password"));
    return data({ view: "unavailable" as const, ...frame(link, language, context.services.config.baseUrl) }, { status: 403, headers: NO_STORE });
  }
  if (!context.services.csrf.verify(csrfKey(link.row.id), form.get("csrf"))) {
    const csrf = context.services.csrf.tokenFor(csrfKey(link.row.id));
    const minLength = await context.services.settings.get("auth.passwordMinLength");
    return data({ view: "csrf" as const, ...frame(link, language, context.services.config.baseUrl), token, csrf, minLength }, { status: 403, headers: NO_STORE });
  }
  if (link.status !== "usable") return problemPage(link, language, context.services.config.baseUrl);
  const outcome = await completePasswordReset(ctx, {
    row: link.row,
    organizationName: link.organization.name,
    newPassword: String(form.get("password") ?? ""),
    meta: { ip: context.req.ip ?? null, requestId: context.requestId },
  });
  if (outcome.ok) {
    const next = await continuationAfterReset(ctx, link.row, { organizationSlug: link.organization.slug, language });
    if (next) return redirect(next, { status: 303, headers: NO_STORE });
    // An explicit 200: the loader Remix re-runs after the action finds the link used (400).
    return data({ view: "changed" as const, ...frame(link, language, context.services.config.baseUrl) }, { status: 200, headers: NO_STORE });
  }
  if (outcome.reason === "invalid_token") return problemPage({ ...link, status: "used" }, language, context.services.config.baseUrl);
  const csrf = context.services.csrf.tokenFor(csrfKey(link.row.id));
  const minLength = await context.services.settings.get("auth.passwordMinLength");
  return data({ view: "form" as const, ...frame(link, language, context.services.config.baseUrl), token, csrf, minLength, problem: outcome.problem, limit: outcome.limit }, { status: 422, headers: NO_STORE });
}

function refusal(link: Found, endpoint: string) {
  return { organizationId: link.organization.id, clientId: link.client?.id ?? null, method: "password" as const, endpoint };
}

export default function ResetPassword() {
  const page = useLoaderData<typeof loader>();
  const result = useActionData<typeof action>();
  const { t } = useTranslation();
  const shown = result ?? page;
  if (shown.view === "unknown") return <UnknownResetLink home={shown.home} />;
  if (shown.view === "changed") return <PasswordChangedCard branding={shown.branding} home={shown.home} clientName={shown.clientName} />;
  if (shown.view !== "form" && shown.view !== "csrf") {
    const message = shown.view === "unavailable" ? t("methodUnavailable.password") : t(shown.view === "used" ? "reset.used" : "reset.expired");
    return (
      <AuthCard branding={shown.branding} title={t(shown.view === "unavailable" ? "methodUnavailable.title" : "reset.problemTitle")}>
        <FormMessage tone="error">{message}</FormMessage>
        <BackToApplication home={shown.home} clientName={shown.clientName} />
      </AuthCard>
    );
  }
  const problem = "problem" in shown ? shown.problem : undefined;
  return (
    <AuthCard branding={shown.branding} title={t("reset.title")}>
      {shown.view === "csrf" ? <FormMessage tone="error">{t("csrf.invalid")}</FormMessage> : null}
      <Form method="post" reloadDocument noValidate>
        <input type="hidden" name="csrf" value={shown.csrf} />
        <input type="hidden" name="token" value={shown.token} />
        <Field
          name="password"
          label={t("reset.newPassword")}
          type="password"
          autoComplete="new-password"
          autoFocus
          hint={t("passwordPolicy.hint", { limit: shown.minLength })}
          error={problem ? t(`passwordPolicy.${problem}`, { limit: "limit" in shown ? shown.limit : undefined }) : undefined}
        />
        <button className="button" type="submit">
          {t("reset.submit")}
        </button>
      </Form>
    </AuthCard>
  );
}
