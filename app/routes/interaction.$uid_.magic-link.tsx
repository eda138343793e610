import { data, redirect, type ActionFunctionArgs, type LoaderFunctionArgs } from "@remix-run/node";
import { useActionData } from "@remix-run/react";
import { useTranslation } from "react-i18next";
import { AuthCard, FormMessage } from "~/components/auth-card";
import { GateRefusalPage } from "~/components/gate-refusal";
import { passGate } from "~/.server/interaction/gate";
import { NO_STORE } from "~/.server/interaction/request";

export async function loader({ params }: LoaderFunctionArgs) {
  return redirect(`/interaction/${params.uid}?method=magic_link`);
}

/** POST /interaction/:uid/magic-link: request a sign-in link by email. */
export async function action({ request, params, context }: ActionFunctionArgs) {
  const form = await request.formData();
  const gate = await passGate(request, context, params.uid!, "magic_link", "POST /interaction/:uid/magic-link", form);
  if (!gate.open) return gate.response;
  return data({ view: "unavailable-now" as const, ...gate.frame }, { status: 503, headers: NO_STORE });
}

export default function MagicLinkRequested() {
  const result = useActionData<typeof action>();
  const { t } = useTranslation();
  if (!result) return null;
  if (result.view !== "unavailable-now") return <GateRefusalPage refusal={result} />;
  return (
    <AuthCard branding={result.branding} title={t("magicLink.title")}>
      <FormMessage tone="error">{t("magicLink.unavailable")}</FormMessage>
      <p className="links">
        <a href={`/interaction/${result.uid}`}>{t("forgot.back")}</a>
      </p>
    </AuthCard>
  );
}
