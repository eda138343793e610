import { data, type ActionFunctionArgs, type LoaderFunctionArgs } from "@remix-run/node";
import { Form, useActionData, useLoaderData } from "@remix-run/react";
import { useTranslation } from "react-i18next";
import { AuthCard, Field, FormMessage } from "~/components/auth-card";
import { acceptInvitation, findOpenInvitation } from "~/.server/auth/invitations";
import { effectiveLoginMethods } from "~/schemas/login-methods";
import { brandingForSlug, brandingOf } from "~/.server/branding/pages";
import { NO_STORE } from "~/.server/sign-in/page";
import { resolveLanguage } from "~/.server/i18n";
import { readForm } from "~/.server/http/form";
import { visitorContext } from "~/.server/sign-in/door";

/** GET /{slug}/invitation?token=…: finish the invited account (name, and a password unless magic links are the only way in). */
export async function loader({ request, params, context }: LoaderFunctionArgs) {
  const token = new URL(request.url).searchParams.get("token") ?? "";
  const invitation = await findOpenInvitation(visitorContext(context), params.slug!, token);
  if (!invitation) {
    return data({ view: "invalid" as const, language: await resolveLanguage(request, {}), ...(await endOfInvitation(context, params.slug!)) }, { status: 400, headers: NO_STORE });
  }
  const language = await resolveLanguage(request, { uiLocales: invitation.language });
  const passwordNeeded = effectiveLoginMethods({ loginMethods: [] }, invitation.organization).includes("password");
  return data(
    {
      view: "form" as const,
      language,
      token,
      csrf: context.services.csrf.tokenFor(`invitation:${invitation.id}`),
      email: invitation.email,
      givenName: invitation.givenName ?? "",
      familyName: invitation.familyName ?? "",
      passwordNeeded,
      minLength: await context.services.settings.get("auth.passwordMinLength"),
      branding: brandingOf(invitation.organization),
    },
    { headers: NO_STORE },
  );
}

export async function action({ request, params, context }: ActionFunctionArgs) {
  const form = await readForm(request);
  const token = String(form.get("token") ?? "");
  const ctx = visitorContext(context);
  const invitation = await findOpenInvitation(ctx, params.slug!, token);
  const language = await resolveLanguage(request, { uiLocales: invitation?.language });
  if (!invitation || !context.services.csrf.verify(`invitation:${invitation.id}`, form.get("csrf"))) {
    return data({ view: "invalid" as const, language, ...(await endOfInvitation(context, params.slug!)) }, { status: 400, headers: NO_STORE });
  }
  const passwordNeeded = effectiveLoginMethods({ loginMethods: [] }, invitation.organization).includes("password");
  const outcome = await acceptInvitation(ctx, {
    organizationSlug: params.slug!,
    token,
    givenName: String(form.get("givenName") ?? "").trim().slice(0, 100),
    familyName: String(form.get("familyName") ?? "").trim().slice(0, 100),
    password: passwordNeeded ? String(form.get("password") ?? "") : null,
  });
  const branding = brandingOf(invitation.organization);
  const account = accountPath(invitation.organization.slug);
  // An explicit 200: otherwise Remix answers with the status of the loader it re-runs after the
  // action, and that loader no longer finds the (now accepted) invitation: 400 for a success.
  if (outcome.ok) return data({ view: "done" as const, language, branding, account }, { status: 200, headers: NO_STORE });
  if (outcome.reason === "weak_password") {
    return data(
      {
        view: "form" as const,
        language,
        token,
        csrf: context.services.csrf.tokenFor(`invitation:${invitation.id}`),
        email: invitation.email,
        givenName: String(form.get("givenName") ?? ""),
        familyName: String(form.get("familyName") ?? ""),
        passwordNeeded,
        minLength: await context.services.settings.get("auth.passwordMinLength"),
        branding,
        problem: outcome.problem,
        limit: outcome.limit,
      },
      { status: 422, headers: NO_STORE },
    );
  }
  return data({ view: outcome.reason, language, branding, account }, { status: outcome.reason === "exists" ? 409 : 400, headers: NO_STORE });
}

/** The organization's account page: where an invited person goes next (no application is known here). */
const accountPath = (slug: string) => `/${slug}/account`;

/** For a link that no longer works: the branding of the organization the address names and, if it is one, its account page. */
async function endOfInvitation(context: LoaderFunctionArgs["context"], slug: string) {
  const { branding } = await brandingForSlug(visitorContext(context), slug);
  return { branding, account: branding ? accountPath(slug.toLowerCase()) : null };
}

export default function AcceptInvitation() {
  const page = useLoaderData<typeof loader>();
  const result = useActionData<typeof action>();
  const { t } = useTranslation();
  const shown = result ?? page;
  if (shown.view !== "form") {
    const text = shown.view === "done" ? t("invitation.done") : shown.view === "exists" ? t("invitation.exists") : t("invitation.invalid");
    const title = t(shown.view === "done" ? "invitation.doneTitle" : "invitation.problemTitle");
    const message = <FormMessage tone={shown.view === "done" ? "info" : "error"}>{text}</FormMessage>;
    // Branded whenever the address names a known organization: the page says whose invitation it
    // was, and the next step is that organization's account page (never a dead end).
    return (
      <AuthCard branding={shown.branding} title={title}>
        {message}
        {shown.account ? (
          <p>
            <a className="button" href={shown.account}>
              {t("invitation.toAccount")}
            </a>
          </p>
        ) : null}
      </AuthCard>
    );
  }
  const problem = "problem" in shown ? shown.problem : undefined;
  return (
    <AuthCard branding={shown.branding} title={t("invitation.title", { organization: shown.branding.name })}>
      <p>{t("invitation.body", { organization: shown.branding.name, email: shown.email })}</p>
      <Form method="post" reloadDocument noValidate>
        <input type="hidden" name="csrf" value={shown.csrf} />
        <input type="hidden" name="token" value={shown.token} />
        <Field name="givenName" label={t("invitation.givenName")} autoComplete="given-name" defaultValue={shown.givenName} autoFocus />
        <Field name="familyName" label={t("invitation.familyName")} autoComplete="family-name" defaultValue={shown.familyName} />
        {shown.passwordNeeded ? (
          <Field
            name="password"
            label={t("invitation.password")}
            type="password"
            autoComplete="new-password"
            hint={t("passwordPolicy.hint", { limit: shown.minLength })}
            error={problem ? t(`passwordPolicy.${problem}`, { limit: "limit" in shown ? shown.limit : undefined }) : undefined}
          />
        ) : (
          <p className="muted">{t("invitation.magicLinkOnly")}</p>
        )}
        <button className="button" type="submit">
          {t("invitation.submit")}
        </button>
      </Form>
    </AuthCard>
  );
}
