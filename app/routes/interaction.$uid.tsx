import { data, redirect, type ActionFunctionArgs, type LoaderFunctionArgs, type MetaFunction } from "@remix-run/node";
import { Form, useActionData, useLoaderData } from "@remix-run/react";
import { useTranslation } from "react-i18next";
import { z } from "zod";
import { EmailSchema } from "~/schemas/email";
import { SlugSchema } from "~/schemas/organization";
import { AuthCard, Field, FormMessage } from "~/components/auth-card";
import { GateRefusalPage, isGateRefusal } from "~/components/gate-refusal";
import { PasskeySignIn } from "~/components/passkey";
import { BotChallengeField, botChallengeMessage } from "~/components/bot-challenge";
import { challengeForForm, challengeRefusalStatus, checkBotChallenge } from "~/.server/sign-in/bot-challenge";
import type { BotChallenge, BotChallengeFailure } from "~/schemas/bot-challenge";
import { FederatedButtons } from "~/components/federation";
import { idpInitiatedContinuation, loginPageProviders, startForEmail } from "~/.server/sign-in/flow";
import { clearIdpInitiatedMark, idpInitiatedMarkOf } from "~/.server/federation/idp-initiated-cookie";
import { completePasswordLogin, consentView, isFirstPartyClient } from "~/.server/sign-in/flow";
import { deviceCookieOf } from "~/.server/sign-in/device-cookie";
import { passGate } from "~/.server/sign-in/door";
import { interactionHeaders, isAfterAction, NO_STORE } from "~/.server/sign-in/page";
import { skipsConsent } from "~/.server/oidc/features/client-policy";
import { recordConsent } from "~/.server/oidc/provider/interaction-results";
import { LOGIN_METHODS, type LoginMethod } from "~/schemas/login-methods";

export const headers = interactionHeaders;

export const meta: MetaFunction = () => [{ title: "Sign in" }, { name: "robots", content: "noindex" }];

const MethodParam = z.enum(LOGIN_METHODS).optional();

export async function loader(args: LoaderFunctionArgs) {
  const { request, context } = args;
  // ?method=password|magic_link|passkey shows one method only; asking for a disabled one is refused.
  // (Not while Remix re-renders the page after a POST: the action already ran its own gate.)
  const search = new URL(request.url).searchParams;
  const requested = MethodParam.safeParse(search.get("method") ?? undefined);
  const only = requested.success && !isAfterAction(context) ? requested.data : undefined;
  const gate = await passGate(args, only ? { method: only, endpoint: "GET /interaction/:uid" } : {});
  if (!gate.open) {
    // A reset completed in a browser that does not hold this sign-in: not "expired", but done.
    const elsewhere = gate.refusal.view === "expired" ? passwordChangedElsewhere(search) : null;
    return elsewhere ? redirect(elsewhere, { status: 303, headers: NO_STORE }) : gate.response;
  }
  const { context: ic, frame } = gate;
  // The application started this request after an IdP-initiated SAML sign-in: take that person.
  const idpInitiated = ic.interaction.prompt.name === "login" ? idpInitiatedContinuation(ic, idpInitiatedMarkOf(request)) : null;
  if (idpInitiated) return redirect(idpInitiated, { status: 303, headers: { ...NO_STORE, "Set-Cookie": clearIdpInitiatedMark(context.services.config.baseUrl) } });

  if (ic.interaction.prompt.name === "consent") {
    // Porta's own admin client (CLI and console) is first party: nothing to ask. Each of its
    // authorizations is a sign-in of its own (see grantMissingConsent).
    if (isFirstPartyClient(ic.client.id)) return redirect(await recordConsent(ic.tenant.provider, ic.interaction, { newSignIn: true }), { headers: NO_STORE });
    if (skipsConsent(ic.client)) return redirect(await recordConsent(ic.tenant.provider, ic.interaction), { headers: NO_STORE });
    return data({ view: "consent" as const, ...frame, ...(await consentView(gate.ctx, ic)) }, { headers: NO_STORE });
  }

  const ssoNone = search.get("sso") === "none";
  const loginHint = ssoNone ? (search.get("login_hint") ?? "").slice(0, 320) : typeof ic.interaction.params.login_hint === "string" ? ic.interaction.params.login_hint : "";
  const methods = only ? [only] : ic.methods;
  const federation = methods.includes("federated") ? await loginPageProviders(gate.ctx, ic) : { providers: [], discovery: false };
  // The password and magic-link forms are one form on this page: one challenge for both.
  const challengedForm = methods.includes("password") ? "password" : methods.includes("magic_link") ? "magic_link" : null;
  const challenge = challengedForm ? await challengeForForm(gate.ctx, ic.organization, challengedForm, { ip: gate.meta.ip }) : null;
  return data(
    {
      view: "login" as const,
      ...frame,
      methods,
      loginHint,
      passwordChanged: search.get("reset") === "done",
      emailInvalid: search.get("invalid") === "email",
      ...federation,
      ssoNone,
      challenge,
    },
    { headers: NO_STORE },
  );
}

/** /{slug}/password-changed for a `?reset=done&org=…&client=…` continuation (see continuationAfterReset). */
function passwordChangedElsewhere(search: URLSearchParams): string | null {
  const org = SlugSchema.safeParse(search.get("org") ?? "");
  if (search.get("reset") !== "done" || !org.success) return null;
  const next = new URLSearchParams();
  for (const name of ["client", "lang"]) {
    const value = search.get(name);
    if (value) next.set(name, value);
  }
  return `/${org.data}/password-changed${next.size > 0 ? `?${next}` : ""}`;
}

const PasswordForm = z.object({
  email: EmailSchema,
  password: z.string().min(1).max(4096),
});

type ActionResult =
  | { error: "failed" | "rate_limited" | "csrf" | "unavailable"; retryAfterMinutes?: number; email: string; fieldErrors?: undefined }
  | { error: "challenge"; reason: BotChallengeFailure; challenge: BotChallenge; email: string; fieldErrors?: undefined }
  | { error: "invalid"; email: string; fieldErrors: { email?: boolean; password?: boolean } };

export async function action(args: ActionFunctionArgs) {
  // Method gate first: before any user lookup and before the CSRF check.
  const gate = await passGate(args, { method: "password", endpoint: "POST /interaction/:uid" });
  const form = gate.form;
  const email = String(form.get("email") ?? "").slice(0, 320);
  if (!gate.open) {
    // The password form shows its own refusals in place; an expired interaction gets the shared page.
    if (gate.refusal.view === "expired") return gate.response;
    return data<ActionResult>({ error: gate.refusal.view, email }, { status: 403, headers: NO_STORE });
  }
  const parsed = PasswordForm.safeParse({ email: form.get("email"), password: form.get("password") });
  if (!parsed.success) {
    const fields = new Set(parsed.error.issues.map((i) => String(i.path[0])));
    return data<ActionResult>(
      { error: "invalid", email, fieldErrors: { email: fields.has("email"), password: fields.has("password") } },
      { status: 422, headers: NO_STORE },
    );
  }

  // Bot protection (decision 091) before anything is looked at: no password check, nothing counted.
  const proof = await checkBotChallenge(gate.ctx, gate.context.organization, "password", { posted: form, meta: gate.meta, email: parsed.data.email });
  if (!proof.ok) {
    return data<ActionResult>({ error: "challenge", reason: proof.reason, challenge: proof.challenge, email }, { status: challengeRefusalStatus(proof.reason), headers: NO_STORE });
  }

  // Home-realm discovery (decision 046): an email whose domain an upstream provider claims signs in there; the password is not looked at.
  const federated = await startForEmail(gate.ctx, gate.context, parsed.data.email, gate.meta.ip);
  if (federated?.kind === "redirect") return redirect(federated.to, { status: 303, headers: NO_STORE });
  if (federated?.kind === "rate_limited") {
    // The address belongs to a provider whose sign-ins failed too often here: the password is not tried instead.
    return data<ActionResult>(
      { error: "rate_limited", email, retryAfterMinutes: Math.ceil(federated.retryAfterSeconds / 60) },
      { status: 429, headers: { ...NO_STORE, "Retry-After": String(federated.retryAfterSeconds) } },
    );
  }

  const outcome = await completePasswordLogin(gate.ctx, gate.context, {
    email: parsed.data.email,
    password: parsed.data.password,
    language: gate.frame.language,
    meta: gate.meta,
    deviceCookie: deviceCookieOf(args.request, gate.context.organization.id),
  });
  if (outcome.kind === "redirect") return redirect(outcome.to, { headers: { ...NO_STORE, "Set-Cookie": outcome.deviceCookie } });
  if (outcome.kind === "rate_limited") {
    return data<ActionResult>(
      { error: "rate_limited", email, retryAfterMinutes: Math.ceil(outcome.retryAfterSeconds / 60) },
      { status: 429, headers: { ...NO_STORE, "Retry-After": String(outcome.retryAfterSeconds) } },
    );
  }
  // One generic answer for every failure cause.
  return data<ActionResult>({ error: "failed", email }, { status: 401, headers: NO_STORE });
}

export default function InteractionPage() {
  const page = useLoaderData<typeof loader>();
  const result = useActionData<typeof action>();
  const { t } = useTranslation();

  if (result && "view" in result) return <GateRefusalPage refusal={result} />;
  if (isGateRefusal(page)) return <GateRefusalPage refusal={page} />;

  if (page.view === "consent") {
    return (
      <AuthCard branding={page.branding} title={t("consent.title", { client: page.clientName })}>
        <p>{t("consent.intro", { email: page.email, client: page.clientName })}</p>
        {page.clientDomain ? (
          <FormMessage tone="info">{t("consent.fromDomain", { client: page.clientName, domain: page.clientDomain })}</FormMessage>
        ) : null}
        <ul className="scopes">
          {page.scopes.map((scope) => (
            <li key={`${scope.resource ?? ""} ${scope.name}`}>
              {scope.resource
                ? t(scope.description ? "consent.scope.resourceDescribed" : "consent.scope.resource", { resource: scope.resource, scope: scope.name, description: scope.description })
                : scope.known
                  ? t(`consent.scope.${scope.name}`, { organization: page.branding.name })
                  : t("consent.scope.custom", { scope: scope.name })}
            </li>
          ))}
        </ul>
        <Form method="post" action={`/interaction/${page.uid}/consent`} reloadDocument>
          <input type="hidden" name="csrf" value={page.csrf} />
          <div className="actions">
            <button className="button" type="submit" name="decision" value="allow">
              {t("consent.allow")}
            </button>
            <button className="button button-secondary" type="submit" name="decision" value="deny">
              {t("consent.deny")}
            </button>
          </div>
        </Form>
      </AuthCard>
    );
  }

  const methods = page.methods as LoginMethod[];
  const error = result && "error" in result ? result : undefined;
  const email = error?.email ?? page.loginHint;
  const message =
    error?.error === "failed"
      ? t("signIn.failed")
      : error?.error === "rate_limited"
        ? t("signIn.rateLimited", { count: error.retryAfterMinutes })
        : error?.error === "csrf"
          ? t("csrf.invalid")
          : error?.error === "unavailable"
            ? t("methodUnavailable.password")
            : error?.error === "challenge"
              ? botChallengeMessage(t, error.reason)
              : undefined;
  const challenge = error?.error === "challenge" ? error.challenge : page.challenge;

  return (
    <AuthCard branding={page.branding} title={t("signIn.title", { organization: page.branding.name })} subtitle={t("signIn.subtitle", { client: page.clientName })}>
      {message ? <FormMessage tone="error">{message}</FormMessage> : null}
      {page.passwordChanged && !message ? <FormMessage tone="info">{t("signIn.passwordChanged")}</FormMessage> : null}
      {page.ssoNone && !message ? <FormMessage tone="error">{t("signIn.ssoNone")}</FormMessage> : null}
      {methods.includes("password") ? (
        <Form method="post" action={`/interaction/${page.uid}`} reloadDocument noValidate>
          <input type="hidden" name="csrf" value={page.csrf} />
          <Field
            name="email"
            label={t("signIn.email")}
            type="email"
            autoComplete={methods.includes("passkey") ? "username webauthn" : "username"}
            defaultValue={email}
            autoFocus={!email}
            error={error?.fieldErrors?.email ? t("signIn.emailInvalid") : undefined}
          />
          <Field
            name="password"
            label={t("signIn.password")}
            type="password"
            autoComplete="current-password"
            autoFocus={Boolean(email)}
            error={error?.fieldErrors?.password ? t("signIn.passwordRequired") : undefined}
          />
          <BotChallengeField challenge={challenge} />
          <button className="button" type="submit">
            {t("signIn.submit")}
          </button>
          {methods.includes("magic_link") ? (
            <>
              <p className="divider">
                <span>{t("signIn.or")}</span>
              </p>
              {/* Same form, other endpoint: the email typed above is what the link goes to. */}
              <button className="button button-secondary" type="submit" formAction={`/interaction/${page.uid}/magic-link`} formNoValidate>
                {t("signIn.magicLink")}
              </button>
            </>
          ) : null}
          {page.discovery ? (
            <button className="button button-secondary" type="submit" formAction={`/interaction/${page.uid}/federated`} formNoValidate>
              {t("signIn.sso")}
            </button>
          ) : null}
          <p className="links">
            <a href={`/interaction/${page.uid}/forgot-password`}>{t("signIn.forgotPassword")}</a>
          </p>
        </Form>
      ) : methods.includes("magic_link") ? (
        <Form method="post" action={`/interaction/${page.uid}/magic-link`} reloadDocument noValidate>
          <input type="hidden" name="csrf" value={page.csrf} />
          <Field
            name="email"
            label={t("signIn.email")}
            type="email"
            autoComplete={methods.includes("passkey") ? "username webauthn" : "username"}
            defaultValue={email}
            autoFocus
            error={page.emailInvalid ? t("signIn.emailInvalid") : undefined}
          />
          <BotChallengeField challenge={challenge} />
          <button className="button" type="submit">
            {t("signIn.magicLink")}
          </button>
          {page.discovery ? (
            <button className="button button-secondary" type="submit" formAction={`/interaction/${page.uid}/federated`} formNoValidate>
              {t("signIn.sso")}
            </button>
          ) : null}
        </Form>
      ) : page.discovery ? (
        <Form method="post" action={`/interaction/${page.uid}/federated`} reloadDocument noValidate>
          <input type="hidden" name="csrf" value={page.csrf} />
          <Field name="email" label={t("signIn.email")} type="email" autoComplete="username" defaultValue={email} autoFocus error={page.emailInvalid ? t("signIn.emailInvalid") : undefined} />
          <button className="button" type="submit">
            {t("signIn.sso")}
          </button>
        </Form>
      ) : null}
      {page.providers.length > 0 ? (
        <>
          {methods.some((m) => m !== "federated") || page.discovery ? (
            <p className="divider">
              <span>{t("signIn.or")}</span>
            </p>
          ) : null}
          <FederatedButtons uid={page.uid} csrf={page.csrf} providers={page.providers} label={(provider) => t("signIn.federated", { provider })} />
        </>
      ) : null}
      {methods.includes("passkey") ? (
        <>
          {methods.length > 1 ? (
            <p className="divider">
              <span>{t("signIn.or")}</span>
            </p>
          ) : null}
          <PasskeySignIn endpoint={`/interaction/${page.uid}/passkey`} csrf={page.csrf} label={t("signIn.passkey")} secondary={methods.length > 1} autofill={methods.length > 1} />
        </>
      ) : null}
    </AuthCard>
  );
}
