import { data, redirect, type ActionFunctionArgs, type LoaderFunctionArgs } from "@remix-run/node";
import { Form, useActionData, useLoaderData } from "@remix-run/react";
import { useTranslation } from "react-i18next";
import { AuthCard, Field, FormMessage } from "~/components/auth-card";
import { GateRefusalPage } from "~/components/gate-refusal";
import { clearPending, loadPending, savePending } from "~/.server/auth/two-factor/pending";
import { issueEmailOtp, verifySecondFactor, type VerifyMethod } from "~/.server/auth/two-factor/service";
import { interactionHeaders, loadInteractionPage, NO_STORE, requestMeta } from "~/.server/interaction/request";
import { recordLoginSuccess } from "~/.server/auth/login-success";
import { recordLogin } from "~/.server/oidc/interaction-results";
import { readForm } from "~/.server/http/form";

// Without it Remix drops the loader's and action's headers (no-store, Retry-After) from the page.
export const headers = interactionHeaders;

/** The second factor after a password: choose a method, then enter a code (or a recovery code). */
export async function loader({ request, params, context }: LoaderFunctionArgs) {
  const uid = params.uid!;
  const loaded = await loadInteractionPage(request, context, uid);
  if (!loaded.ok) return data({ view: "expired" as const, language: loaded.language }, { status: 400, headers: NO_STORE });
  const pending = await loadPending(context.services.store, uid);
  if (!pending || pending.organizationId !== loaded.context.organization.id) return redirect(`/interaction/${uid}`, { headers: NO_STORE });
  if (pending.plan.enrollTotp && !pending.enrolled) return redirect(`/interaction/${uid}/two-factor/setup`, { headers: NO_STORE });
  const recovery = new URL(request.url).searchParams.get("method") === "recovery" && pending.plan.recovery;
  const view = recovery ? ("recovery" as const) : pending.chosen === null ? ("choose" as const) : pending.chosen;
  return data(
    { view, ...loaded.frame, methods: pending.plan.methods, recoveryAvailable: pending.plan.recovery, minutes: await context.services.settings.get("auth.emailOtpTtlMinutes") },
    { headers: NO_STORE },
  );
}

export async function action({ request, params, context }: ActionFunctionArgs) {
  const uid = params.uid!;
  const { services } = context;
  const loaded = await loadInteractionPage(request, context, uid);
  if (!loaded.ok) return data({ view: "expired" as const, language: loaded.language }, { status: 400, headers: NO_STORE });
  const form = await readForm(request);
  if (!services.csrf.verify(uid, form.get("csrf"))) return data({ view: "csrf" as const, ...loaded.frame }, { status: 403, headers: NO_STORE });
  const pending = await loadPending(services.store, uid);
  if (!pending || pending.organizationId !== loaded.context.organization.id) return redirect(`/interaction/${uid}`, { headers: NO_STORE });
  const intent = form.get("intent");

  if (intent === "choose") {
    const method = form.get("method");
    if (method !== "totp" && method !== "email") return redirect(`/interaction/${uid}/two-factor`);
    if (!pending.plan.methods.includes(method)) return redirect(`/interaction/${uid}/two-factor`);
    await savePending(services.store, uid, { ...pending, chosen: method });
    if (method === "email") await issueEmailOtp(services, pending.userId, pending.language);
    return redirect(`/interaction/${uid}/two-factor`, { headers: NO_STORE });
  }
  if (intent === "resend" && pending.chosen === "email") {
    const limit = await services.limits.consume("emailOtpResend", pending.userId);
    if (!limit.allowed) {
      return data(
        { error: "resend_limited" as const, minutes: Math.ceil(limit.retryAfterSeconds / 60) },
        { status: 429, headers: { ...NO_STORE, "Retry-After": String(limit.retryAfterSeconds) } },
      );
    }
    await issueEmailOtp(services, pending.userId, pending.language);
    return data({ notice: "resent" as const }, { headers: NO_STORE });
  }

  const method = form.get("method");
  const allowed: VerifyMethod[] = [...(pending.chosen ? [pending.chosen] : []), ...(pending.plan.recovery ? (["recovery"] as const) : [])];
  if ((method !== "totp" && method !== "email" && method !== "recovery") || !allowed.includes(method)) {
    return redirect(`/interaction/${uid}/two-factor`, { headers: NO_STORE });
  }
  const meta = requestMeta(context, "POST /interaction/:uid/two-factor");
  const outcome = await verifySecondFactor(services, {
    userId: pending.userId,
    organizationId: pending.organizationId,
    method,
    code: String(form.get("code") ?? "").slice(0, 64),
    ip: meta.ip,
    requestId: meta.requestId,
  });
  if (outcome.ok) {
    await clearPending(services.store, uid);
    const amr = ["pwd", method === "totp" ? "otp" : method === "email" ? "otp" : "kba", "mfa"];
    const to = await recordLogin(loaded.context.interaction, { accountId: pending.userId, amr });
    await recordLoginSuccess(
      { prisma: services.db.prisma, audit: services.audit },
      { organizationId: pending.organizationId, userId: pending.userId, clientId: loaded.context.client.id, method: "password", secondFactor: method, ip: meta.ip, requestId: meta.requestId },
    );
    return redirect(to, { headers: NO_STORE });
  }
  if (outcome.reason === "rate_limited") {
    return data(
      { error: "rate_limited" as const, minutes: Math.ceil(outcome.retryAfterSeconds / 60) },
      { status: 429, headers: { ...NO_STORE, "Retry-After": String(outcome.retryAfterSeconds) } },
    );
  }
  return data({ error: "failed" as const }, { status: 401, headers: NO_STORE });
}

export default function TwoFactor() {
  const page = useLoaderData<typeof loader>();
  const result = useActionData<typeof action>();
  const { t } = useTranslation();
  if (page.view === "expired") return <GateRefusalPage refusal={page} />;
  if (result && "view" in result) return <GateRefusalPage refusal={result} />;
  const error = result && "error" in result ? result : undefined;
  const message =
    error?.error === "failed"
      ? t("twoFactor.failed")
      : error?.error === "rate_limited"
        ? t("twoFactor.rateLimited", { minutes: error.minutes })
        : error?.error === "resend_limited"
          ? t("twoFactor.resendLimited", { minutes: error.minutes })
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
            <button className="button button-secondary" type="submit" name="method" value="email">
              {t("twoFactor.useEmail")}
            </button>
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

  const isRecovery = page.view === "recovery";
  const intro = isRecovery ? t("twoFactor.recoveryIntro") : page.view === "totp" ? t("twoFactor.totpIntro") : t("twoFactor.emailIntro", { minutes: page.minutes });
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
          autoComplete="one-time-code"
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
      <p className="links">
        {isRecovery ? (
          <a href={`/interaction/${page.uid}/two-factor`}>{t("twoFactor.usePrimary")}</a>
        ) : page.recoveryAvailable ? (
          <a href={`/interaction/${page.uid}/two-factor?method=recovery`}>{t("twoFactor.useRecovery")}</a>
        ) : null}
      </p>
    </AuthCard>
  );
}
