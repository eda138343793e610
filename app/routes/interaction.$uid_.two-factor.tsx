import { data, redirect, type ActionFunctionArgs, type LoaderFunctionArgs, type MetaFunction } from "@remix-run/node";
import { Form, useActionData, useLoaderData } from "@remix-run/react";
import { useTranslation } from "react-i18next";
import { AuthCard, Field, FormMessage } from "~/components/auth-card";
import { pageTitle } from "~/i18n/page-title";
import { GateRefusalPage, isGateRefusal } from "~/components/gate-refusal";
import { PasskeyRegister, PasskeySignIn } from "~/components/passkey";
import { chooseSecondFactor, isFactorLocked, loadSecondFactorStep, passkeyEnrollmentDue, resendEmailOtp, signInWithSecondFactor } from "~/.server/sign-in/flow";
import { passGate } from "~/.server/sign-in/door";
import { interactionHeaders, NO_STORE } from "~/.server/sign-in/page";

export const meta: MetaFunction<typeof loader> = ({ data }) => [
  { title: pageTitle(data && "language" in data ? data.language : undefined, (m) => (data && "registerPasskey" in data && data.registerPasskey ? m.twoFactor.passkeySetupTitle : m.twoFactor.title)) },
  { name: "robots", content: "noindex" },
];

// Without it Remix drops the loader's and action's headers (no-store, Retry-After) from the page.
export const headers = interactionHeaders;

/** The second factor after a password: choose a method, then enter a code (or a recovery code). */
export async function loader(args: LoaderFunctionArgs) {
  const gate = await passGate(args);
  if (!gate.open) return gate.response;
  const { uid } = gate;
  const pending = await loadSecondFactorStep(gate.ctx, gate.context);
  if (!pending) return redirect(`/interaction/${uid}`, { headers: NO_STORE });
  if (pending.plan.enrollTotp && !pending.enrolled) return redirect(`/interaction/${uid}/two-factor/setup`, { headers: NO_STORE });
  const asked = new URL(args.request.url).searchParams.get("method");
  const recovery = asked === "recovery" && pending.plan.recovery;
  // "Another way": back to the choice when the plan offers more than one factor.
  const choose = asked === "choose" && pending.plan.methods.length > 1;
  const view = recovery ? ("recovery" as const) : pending.chosen === null || choose ? ("choose" as const) : pending.chosen;
  // A factor refused after too many wrong codes in a row says so before a code is typed.
  const locked = view === "totp" || view === "email" ? await isFactorLocked(gate.ctx, pending.userId, view) : false;
  return data(
    {
      view,
      ...gate.frame,
      registerPasskey: view === "passkey" && (await passkeyEnrollmentDue(gate.ctx, pending)),
      methods: pending.plan.methods,
      recoveryAvailable: pending.plan.recovery,
      minutes: await gate.ctx.settings.get("auth.emailOtpTtlMinutes"),
      locked,
    },
    { headers: NO_STORE },
  );
}

export async function action(args: ActionFunctionArgs) {
  const gate = await passGate(args);
  if (!gate.open) return gate.response;
  const { uid, form } = gate;
  const pending = await loadSecondFactorStep(gate.ctx, gate.context);
  if (!pending) return redirect(`/interaction/${uid}`, { headers: NO_STORE });
  const intent = form.get("intent");

  if (intent === "choose") {
    const chosen = await chooseSecondFactor(gate.ctx, gate.context, pending, form.get("method"));
    if (chosen.ok) return redirect(`/interaction/${uid}/two-factor`, { headers: NO_STORE });
    return data(
      { error: "resend_limited" as const, minutes: Math.ceil(chosen.retryAfterSeconds / 60) },
      { status: 429, headers: { ...NO_STORE, "Retry-After": String(chosen.retryAfterSeconds) } },
    );
  }
  if (intent === "resend" && pending.chosen === "email") {
    const resent = await resendEmailOtp(gate.ctx, pending);
    if (!resent.ok) {
      return data(
        { error: "resend_limited" as const, minutes: Math.ceil(resent.retryAfterSeconds / 60) },
        { status: 429, headers: { ...NO_STORE, "Retry-After": String(resent.retryAfterSeconds) } },
      );
    }
    return data({ notice: "resent" as const }, { headers: NO_STORE });
  }

  const outcome = await signInWithSecondFactor(gate.ctx, gate.context, pending, {
    method: form.get("method"),
    code: String(form.get("code") ?? "").slice(0, 64),
    meta: gate.meta,
  });
  if (outcome.kind === "signed_in") return redirect(outcome.redirectTo, { headers: NO_STORE });
  if (outcome.kind === "not_offered") return redirect(`/interaction/${uid}/two-factor`, { headers: NO_STORE });
  if (outcome.kind === "rate_limited") {
    return data(
      { error: "rate_limited" as const, minutes: Math.ceil(outcome.retryAfterSeconds / 60) },
      { status: 429, headers: { ...NO_STORE, "Retry-After": String(outcome.retryAfterSeconds) } },
    );
  }
  if (outcome.kind === "factor_locked") return data({ error: "factor_locked" as const }, { status: 403, headers: NO_STORE });
  return data({ error: "failed" as const }, { status: 401, headers: NO_STORE });
}

export default function TwoFactor() {
  const page = useLoaderData<typeof loader>();
  const result = useActionData<typeof action>();
  const { t } = useTranslation();
  if (isGateRefusal(page)) return <GateRefusalPage refusal={page} />;
  if (result && "view" in result) return <GateRefusalPage refusal={result} />;
  const error = result && "error" in result ? result : undefined;
  const message =
    error?.error === "failed"
      ? t("twoFactor.failed")
      : error?.error === "rate_limited"
        ? t("twoFactor.rateLimited", { count: error.minutes })
        : error?.error === "resend_limited"
          ? t("twoFactor.resendLimited", { count: error.minutes })
          : undefined;

  if (page.view === "choose") {
    return (
      <AuthCard branding={page.branding} title={t("twoFactor.title")}>
        <p>{t("twoFactor.chooseIntro")}</p>
        <Form method="post" reloadDocument>
          <input type="hidden" name="csrf" value={page.csrf} />
          <input type="hidden" name="intent" value="choose" />
          <div className="actions">
            {page.methods.includes("totp") ? (
              <button className="button" type="submit" name="method" value="totp">
                {t("twoFactor.useTotp")}
              </button>
            ) : null}
            {page.methods.includes("passkey") ? (
              <button className="button" type="submit" name="method" value="passkey">
                {t("twoFactor.usePasskey")}
              </button>
            ) : null}
            {page.methods.includes("email") ? (
              <button className="button button-secondary" type="submit" name="method" value="email">
                {t("twoFactor.useEmail")}
              </button>
            ) : null}
          </div>
        </Form>
        {page.recoveryAvailable ? (
          <p className="links">
            <a href={`/interaction/${page.uid}/two-factor?method=recovery`}>{t("twoFactor.useRecovery")}</a>
          </p>
        ) : null}
      </AuthCard>
    );
  }

  const otherWays = (
    <p className="links">
      {page.methods.length > 1 ? (
        <a href={`/interaction/${page.uid}/two-factor?method=choose`}>{t("twoFactor.otherMethod")}</a>
      ) : null}
      {page.recoveryAvailable ? (
        <>
          {page.methods.length > 1 ? " · " : null}
          <a href={`/interaction/${page.uid}/two-factor?method=recovery`}>{t("twoFactor.useRecovery")}</a>
        </>
      ) : null}
    </p>
  );

  if (page.view === "passkey" && page.registerPasskey) {
    return (
      <AuthCard branding={page.branding} title={t("twoFactor.passkeySetupTitle")}>
        <p>{t("twoFactor.passkeySetupIntro")}</p>
        <PasskeyRegister endpoint={`/interaction/${page.uid}/two-factor/passkey`} csrf={page.csrf} optionsIntent="register-options" />
      </AuthCard>
    );
  }

  if (page.view === "passkey") {
    return (
      <AuthCard branding={page.branding} title={t("twoFactor.title")}>
        <p>{t("twoFactor.passkeyIntro")}</p>
        <PasskeySignIn endpoint={`/interaction/${page.uid}/two-factor/passkey`} csrf={page.csrf} label={t("twoFactor.usePasskey")} />
        {otherWays}
      </AuthCard>
    );
  }

  const isRecovery = page.view === "recovery";
  const intro = isRecovery ? t("twoFactor.recoveryIntro") : page.view === "totp" ? t("twoFactor.totpIntro") : t("twoFactor.emailIntro", { count: page.minutes });
  if (!isRecovery && (page.locked || error?.error === "factor_locked")) {
    // No code form: the factor is refused whatever the code; another way is offered.
    return (
      <AuthCard branding={page.branding} title={t("twoFactor.title")}>
        <FormMessage tone="error">{page.view === "totp" ? t("twoFactor.factorLockedTotp") : t("twoFactor.factorLockedEmail")}</FormMessage>
        {otherWays}
      </AuthCard>
    );
  }
  return (
    <AuthCard branding={page.branding} title={t("twoFactor.title")}>
      {error?.error === "rate_limited" || error?.error === "resend_limited" ? <FormMessage tone="error">{message}</FormMessage> : null}
      {result && "notice" in result ? <FormMessage tone="info">{t("twoFactor.resent")}</FormMessage> : null}
      <p>{intro}</p>
      <Form method="post" reloadDocument noValidate>
        <input type="hidden" name="csrf" value={page.csrf} />
        <input type="hidden" name="intent" value="verify" />
        <input type="hidden" name="method" value={page.view} />
        <Field
          name="code"
          label={isRecovery ? t("twoFactor.recoveryCode") : t("twoFactor.code")}
          autoComplete={isRecovery ? "off" : "one-time-code"}
          inputMode={isRecovery ? "text" : "numeric"}
          autoFocus
          error={error?.error === "failed" ? message : undefined}
        />
        <button className="button" type="submit">
          {t("twoFactor.verify")}
        </button>
      </Form>
      {page.view === "email" ? (
        <Form method="post" reloadDocument>
          <input type="hidden" name="csrf" value={page.csrf} />
          <input type="hidden" name="intent" value="resend" />
          <p className="links">
            <button className="button button-secondary" type="submit">
              {t("twoFactor.resend")}
            </button>
          </p>
        </Form>
      ) : null}
      {isRecovery ? (
        <p className="links">
          <a href={`/interaction/${page.uid}/two-factor`}>{t("twoFactor.usePrimary")}</a>
        </p>
      ) : (
        otherWays
      )}
    </AuthCard>
  );
}
