import { data, redirect, type MetaFunction, type ActionFunctionArgs, type LoaderFunctionArgs } from "@remix-run/node";
import { Form, useActionData } from "@remix-run/react";
import { useTranslation } from "react-i18next";
import { pageTitle } from "~/i18n/page-title";
import { resolveLanguage } from "~/.server/i18n";
import { EmailSchema } from "~/schemas/email";
import { AuthCard, Field, FormMessage } from "~/components/auth-card";
import { BotChallengeField, botChallengeMessage } from "~/components/bot-challenge";
import { challengeRefusalStatus, checkBotChallenge } from "~/.server/sign-in/bot-challenge";
import { GateRefusalPage } from "~/components/gate-refusal";
import { MagicLinkWaiting } from "~/components/magic-link-waiting";
import { requestMagicLink } from "~/.server/sign-in/magic-link-request";
import { passGate } from "~/.server/sign-in/door";
import { interactionHeaders, isAfterAction, NO_STORE } from "~/.server/sign-in/page";

export const headers = interactionHeaders;
export const meta: MetaFunction<typeof loader> = ({ data }) => [{ title: pageTitle(data?.language, (m) => m.magicLink.title) }, { name: "robots", content: "noindex" }];

/** GET /interaction/:uid/magic-link is the login page showing the magic-link form (whose loader passes the gate). */
export async function loader({ request, params, context }: LoaderFunctionArgs) {
  // After the action its answer is the page: a redirect here would replace it (and its 403).
  if (isAfterAction(context)) return { language: await resolveLanguage(request, {}) };
  return redirect(`/interaction/${params.uid}?method=magic_link`);
}

/** POST /interaction/:uid/magic-link: the same answer whether or not the address has an account. */
export async function action(args: ActionFunctionArgs) {
  const gate = await passGate(args, { method: "magic_link", endpoint: "POST /interaction/:uid/magic-link" });
  if (!gate.open) return gate.response;
  const email = EmailSchema.safeParse(gate.form.get("email"));
  if (!email.success) return redirect(`/interaction/${gate.uid}?method=magic_link&invalid=email`, { headers: NO_STORE });
  // Bot protection (decision 091) before anything is counted or mailed.
  const proof = await checkBotChallenge(gate.ctx, gate.context.organization, "magic_link", { posted: gate.form, meta: gate.meta, email: email.data });
  if (!proof.ok) {
    return data(
      { view: "challenge" as const, ...gate.frame, email: email.data, reason: proof.reason, challenge: proof.challenge },
      { status: challengeRefusalStatus(proof.reason), headers: NO_STORE },
    );
  }
  const outcome = await requestMagicLink({ ...gate.ctx, jobs: args.context.services.jobs }, {
    organizationId: gate.context.organization.id,
    email: email.data,
    interactionUid: gate.context.uid,
    clientId: gate.context.client.id,
    language: gate.frame.language,
    ip: gate.meta.ip,
  });
  if (outcome.status === "rate_limited") {
    return data(
      { view: "rate_limited" as const, ...gate.frame, minutes: Math.ceil(outcome.retryAfterSeconds / 60) },
      { status: 429, headers: { ...NO_STORE, "Retry-After": String(outcome.retryAfterSeconds) } },
    );
  }
  return data({ view: "sent" as const, ...gate.frame, email: email.data, pairingCode: outcome.pairingCode }, { headers: NO_STORE });
}

export default function MagicLinkRequested() {
  const result = useActionData<typeof action>();
  const { t } = useTranslation();
  if (!result) return null;
  if (result.view !== "sent" && result.view !== "rate_limited" && result.view !== "challenge") return <GateRefusalPage refusal={result} />;
  if (result.view === "challenge") {
    return (
      <AuthCard branding={result.branding} title={t("magicLink.title")}>
        <FormMessage tone="error">{botChallengeMessage(t, result.reason)}</FormMessage>
        <Form method="post" action={`/interaction/${result.uid}/magic-link`} reloadDocument noValidate>
          <input type="hidden" name="csrf" value={result.csrf} />
          <Field name="email" label={t("signIn.email")} type="email" autoComplete="username" defaultValue={result.email} />
          <BotChallengeField challenge={result.challenge} />
          <button className="button" type="submit">
            {t("signIn.magicLink")}
          </button>
        </Form>
        <p className="links">
          <a href={`/interaction/${result.uid}`}>{t("forgot.back")}</a>
        </p>
      </AuthCard>
    );
  }
  return (
    <AuthCard branding={result.branding} title={t("magicLink.title")}>
      {result.view === "sent" ? (
        <>
          <FormMessage tone="info">{t("magicLink.sent", { email: result.email })}</FormMessage>
          <MagicLinkWaiting uid={result.uid} code={result.pairingCode} />
        </>
      ) : (
        <FormMessage tone="error">{t("signIn.rateLimited", { count: result.minutes })}</FormMessage>
      )}
      <p className="links">
        <a href={`/interaction/${result.uid}`}>{t("forgot.back")}</a>
      </p>
    </AuthCard>
  );
}
