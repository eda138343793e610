import { data, redirect, type ActionFunctionArgs, type LoaderFunctionArgs } from "@remix-run/node";
import { useActionData } from "@remix-run/react";
import { useTranslation } from "react-i18next";
import { AuthCard, FormMessage } from "~/components/auth-card";
import { GateRefusalPage } from "~/components/gate-refusal";
import { passGate } from "~/.server/interaction/gate";
import { NO_STORE } from "~/.server/interaction/request";

export async function loader({ params }: LoaderFunctionArgs) {
  return redirect(`/interaction/${params.uid}/forgot-password`);
}

/** POST /interaction/:uid/reset-password: set a new password with a reset token. */
export async function action({ request, params, context }: ActionFunctionArgs) {
  const form = await request.formData();
  const gate = await passGate(request, context, params.uid!, "password", "POST /interaction/:uid/reset-password", form);
  if (!gate.open) return gate.response;
  return data({ view: "invalid" as const, ...gate.frame }, { status: 400, headers: NO_STORE });
}

export default function ResetPassword() {
  const result = useActionData<typeof action>();
  const { t } = useTranslation();
  if (!result) return null;
  if (result.view !== "invalid") return <GateRefusalPage refusal={result} />;
  return (
    <AuthCard branding={result.branding} title={t("reset.title")}>
      <FormMessage tone="error">{t("reset.invalid")}</FormMessage>
      <p className="links">
        <a href={`/interaction/${result.uid}/forgot-password`}>{t("forgot.title")}</a>
      </p>
    </AuthCard>
  );
}
