import { data, type ActionFunctionArgs, type LoaderFunctionArgs } from "@remix-run/node";
import { Form, useActionData, useLoaderData } from "@remix-run/react";
import { useTranslation } from "react-i18next";
import { AuthCard, Field, FormMessage } from "~/components/auth-card";
import { GateRefusalPage } from "~/components/gate-refusal";
import { passGate } from "~/.server/interaction/gate";
import { NO_STORE } from "~/.server/interaction/request";

/** GET /interaction/:uid/forgot-password: the reset request form (password method only). */
export async function loader({ request, params, context }: LoaderFunctionArgs) {
  const gate = await passGate(request, context, params.uid!, "password", "GET /interaction/:uid/forgot-password");
  if (!gate.open) return gate.response;
  return data({ view: "form" as const, ...gate.frame }, { headers: NO_STORE });
}

/** POST /interaction/:uid/forgot-password: request a reset link. */
export async function action({ request, params, context }: ActionFunctionArgs) {
  const form = await request.formData();
  const gate = await passGate(request, context, params.uid!, "password", "POST /interaction/:uid/forgot-password", form);
  if (!gate.open) return gate.response;
  return data({ view: "unavailable-now" as const, ...gate.frame }, { status: 503, headers: NO_STORE });
}

export default function ForgotPassword() {
  const page = useLoaderData<typeof loader>();
  const result = useActionData<typeof action>();
  const { t } = useTranslation();
  const shown = result ?? page;
  if (shown.view !== "form" && shown.view !== "unavailable-now") return <GateRefusalPage refusal={shown} />;
  return (
    <AuthCard branding={shown.branding} title={t("forgot.title")}>
      {shown.view === "unavailable-now" ? <FormMessage tone="error">{t("magicLink.unavailable")}</FormMessage> : <p>{t("forgot.body")}</p>}
      <Form method="post" reloadDocument noValidate>
        <input type="hidden" name="csrf" value={shown.csrf} />
        <Field name="email" label={t("signIn.email")} type="email" autoComplete="username" autoFocus />
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
