import { data, redirect, type ActionFunctionArgs, type LoaderFunctionArgs } from "@remix-run/node";
import { Form, useActionData, useLoaderData } from "@remix-run/react";
import { useTranslation } from "react-i18next";
import { AuthCard, Field, FormMessage } from "~/components/auth-card";
import { GateRefusalPage, isGateRefusal } from "~/components/gate-refusal";
import { completePasswordReset, findUsableResetToken } from "~/.server/auth/password-reset";
import { passGate } from "~/.server/interaction/gate";
import { interactionHeaders, NO_STORE } from "~/.server/interaction/request";

export const headers = interactionHeaders;

/** GET /interaction/:uid/reset-password?token=…: the new-password form of a valid link. */
export async function loader(args: LoaderFunctionArgs) {
  const gate = await passGate(args, { method: "password", endpoint: "GET /interaction/:uid/reset-password" });
  if (!gate.open) return gate.response;
  const token = new URL(args.request.url).searchParams.get("token") ?? "";
  const usable = await findUsableResetToken(args.context.services, gate.context.organization.id, token);
  if (!usable) return data({ view: "invalid" as const, ...gate.frame }, { status: 400, headers: NO_STORE });
  return data({ view: "form" as const, ...gate.frame, token }, { headers: NO_STORE });
}

/** POST /interaction/:uid/reset-password: set the new password, end the user's sessions. */
export async function action(args: ActionFunctionArgs) {
  const gate = await passGate(args, { method: "password", endpoint: "POST /interaction/:uid/reset-password" });
  if (!gate.open) return gate.response;
  const token = String(gate.form.get("token") ?? "");
  const outcome = await completePasswordReset(args.context.services, {
    organizationId: gate.context.organization.id,
    token,
    newPassword: String(gate.form.get("password") ?? ""),
    meta: gate.meta,
  });
  if (outcome.ok) return redirect(`/interaction/${gate.context.uid}?reset=done`, { headers: NO_STORE });
  if (outcome.reason === "invalid_token") return data({ view: "invalid" as const, ...gate.frame }, { status: 400, headers: NO_STORE });
  return data({ view: "form" as const, ...gate.frame, token, problem: outcome.problem, limit: outcome.limit }, { status: 422, headers: NO_STORE });
}

export default function ResetPassword() {
  const page = useLoaderData<typeof loader>();
  const result = useActionData<typeof action>();
  const { t } = useTranslation();
  const shown = result ?? page;
  if (isGateRefusal(shown)) return <GateRefusalPage refusal={shown} />;
  if (shown.view === "invalid") {
    return (
      <AuthCard branding={shown.branding} title={t("reset.title")}>
        <FormMessage tone="error">{t("reset.invalid")}</FormMessage>
        <p className="links">
          <a href={`/interaction/${shown.uid}/forgot-password`}>{t("forgot.title")}</a>
        </p>
      </AuthCard>
    );
  }
  const problem = "problem" in shown ? shown.problem : undefined;
  return (
    <AuthCard branding={shown.branding} title={t("reset.title")}>
      <Form method="post" reloadDocument noValidate>
        <input type="hidden" name="csrf" value={shown.csrf} />
        <input type="hidden" name="token" value={shown.token} />
        <Field
          name="password"
          label={t("reset.newPassword")}
          type="password"
          autoComplete="new-password"
          autoFocus
          error={problem ? t(`passwordPolicy.${problem}`, { limit: "limit" in shown ? shown.limit : undefined }) : undefined}
        />
        <button className="button" type="submit">
          {t("reset.submit")}
        </button>
      </Form>
    </AuthCard>
  );
}
