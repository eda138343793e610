import { data, type ActionFunctionArgs, type LoaderFunctionArgs } from "@remix-run/node";
import { Form, useActionData, useLoaderData } from "@remix-run/react";
import { useTranslation } from "react-i18next";
import { EmailSchema } from "~/schemas/email";
import { AuthCard, Field, FormMessage } from "~/components/auth-card";
import { BotChallengeField, botChallengeMessage } from "~/components/bot-challenge";
import { challengeForForm, challengeRefusalStatus, checkBotChallenge } from "~/.server/sign-in/bot-challenge";
import { GateRefusalPage, isGateRefusal } from "~/components/gate-refusal";
import { requestPasswordReset } from "~/.server/auth/password-reset";
import { passGate } from "~/.server/sign-in/door";
import { interactionHeaders, NO_STORE } from "~/.server/sign-in/page";

export const headers = interactionHeaders;

/** GET /interaction/:uid/forgot-password: the reset request form (password method only). */
export async function loader(args: LoaderFunctionArgs) {
  const gate = await passGate(args, { method: "password", endpoint: "GET /interaction/:uid/forgot-password" });
  if (!gate.open) return gate.response;
  const challenge = await challengeForForm(gate.ctx, gate.context.organization, "password_reset", { ip: gate.meta.ip });
  return data({ view: "form" as const, ...gate.frame, challenge }, { headers: NO_STORE });
}

/** POST /interaction/:uid/forgot-password: enqueue and answer the same for every address. */
export async function action(args: ActionFunctionArgs) {
  const gate = await passGate(args, { method: "password", endpoint: "POST /interaction/:uid/forgot-password" });
  if (!gate.open) return gate.response;
  const email = EmailSchema.safeParse(gate.form.get("email"));
  if (!email.success) {
    const challenge = await challengeForForm(gate.ctx, gate.context.organization, "password_reset", { ip: gate.meta.ip });
    return data({ view: "invalid" as const, ...gate.frame, challenge }, { status: 422, headers: NO_STORE });
  }
  // Bot protection (decision 091) before anything is counted or mailed.
  const proof = await checkBotChallenge(gate.ctx, gate.context.organization, "password_reset", { posted: gate.form, meta: gate.meta, email: email.data });
  if (!proof.ok) {
    return data({ view: "challenge" as const, ...gate.frame, reason: proof.reason, challenge: proof.challenge, email: email.data }, { status: challengeRefusalStatus(proof.reason), headers: NO_STORE });
  }
  const outcome = await requestPasswordReset(gate.ctx, {
    organizationId: gate.context.organization.id,
    email: email.data,
    interactionUid: gate.context.uid,
    clientId: gate.context.client.id,
    language: gate.frame.language,
    ip: gate.meta.ip,
  });
  if (outcome.status === "rate_limited") {
    const challenge = await challengeForForm(gate.ctx, gate.context.organization, "password_reset", { ip: gate.meta.ip });
    return data(
      { view: "rate_limited" as const, ...gate.frame, challenge, minutes: Math.ceil(outcome.retryAfterSeconds / 60) },
      { status: 429, headers: { ...NO_STORE, "Retry-After": String(outcome.retryAfterSeconds) } },
    );
  }
  return data({ view: "sent" as const, ...gate.frame, email: email.data }, { headers: NO_STORE });
}

export default function ForgotPassword() {
  const page = useLoaderData<typeof loader>();
  const result = useActionData<typeof action>();
  const { t } = useTranslation();
  const shown = result ?? page;
  if (isGateRefusal(shown)) return <GateRefusalPage refusal={shown} />;
  if (shown.view === "sent") {
    return (
      <AuthCard branding={shown.branding} title={t("forgot.title")}>
        <FormMessage tone="info">{t("forgot.sent", { email: shown.email })}</FormMessage>
        <p className="links">
          <a href={`/interaction/${shown.uid}`}>{t("forgot.back")}</a>
        </p>
      </AuthCard>
    );
  }
  return (
    <AuthCard branding={shown.branding} title={t("forgot.title")}>
      {shown.view === "rate_limited" ? (
        <FormMessage tone="error">{t("signIn.rateLimited", { count: shown.minutes })}</FormMessage>
      ) : shown.view === "challenge" ? (
        <FormMessage tone="error">{botChallengeMessage(t, shown.reason)}</FormMessage>
      ) : (
        <p>{t("forgot.body")}</p>
      )}
      <Form method="post" reloadDocument noValidate>
        <input type="hidden" name="csrf" value={shown.csrf} />
        <Field
          name="email"
          label={t("signIn.email")}
          type="email"
          autoComplete="username"
          autoFocus
          defaultValue={shown.view === "challenge" ? shown.email : undefined}
          error={shown.view === "invalid" ? t("signIn.emailInvalid") : undefined}
        />
        <BotChallengeField challenge={shown.challenge} />
        <button className="button" type="submit">
          {t("forgot.submit")}
        </button>
      </Form>
      <p className="links">
        <a href={`/interaction/${shown.uid}`}>{t("forgot.back")}</a>
      </p>
    </AuthCard>
  );
}
