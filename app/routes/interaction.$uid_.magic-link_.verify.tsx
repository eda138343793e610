import { data, redirect, type MetaFunction, type ActionFunctionArgs, type LoaderFunctionArgs } from "@remix-run/node";
import { Form, useActionData, useLoaderData } from "@remix-run/react";
import { useTranslation } from "react-i18next";
import { pageTitle } from "~/i18n/page-title";
import { AuthCard, Field, FormMessage } from "~/components/auth-card";
import { BackToApplication } from "~/components/password-changed";
import { useNonce } from "~/components/nonce";
import { confirmMagicLinkElsewhere, magicLinkSignIn } from "~/.server/sign-in/flow";
import type { MagicLinkPairing, MagicLinkSignIn } from "~/.server/sign-in/methods/magic-link";
import { passGate, visitorContext } from "~/.server/sign-in/door";
import { brandingForSlug } from "~/.server/branding/pages";
import { NO_STORE } from "~/.server/sign-in/page";
import { resolveLanguage } from "~/.server/i18n";

export const meta: MetaFunction<typeof loader> = ({ data }) => [{ title: pageTitle(data?.language, (m) => m.magicLink.confirmTitle) }, { name: "robots", content: "noindex" }];
/**
 * GET shows a page that consumes the link by POST (sent by script at once, or by the button
 * without script): mail scanners that prefetch links never use one up. It needs no interaction
 * (a scanner has none), so it does not pass the gate; the POST does. In a browser other than the
 * asking one, while that sign-in is open, the POST asks for the number the asking page shows
 * (decision 033) and a second POST with it lets the asking browser finish.
 */
export async function loader({ request, params, context }: LoaderFunctionArgs) {
  const url = new URL(request.url);
  return data(
    {
      view: "confirm" as const,
      language: await resolveLanguage(request, {}),
      uid: params.uid!,
      token: url.searchParams.get("token") ?? "",
      org: url.searchParams.get("org") ?? "",
      csrf: context.services.csrf.tokenFor(params.uid!),
    },
    { headers: NO_STORE },
  );
}

type Outcome = Exclude<MagicLinkSignIn["status"] | MagicLinkPairing["status"], "signed_in">;
const STATUS: Record<Outcome, number> = {
  invalid: 400,
  method_disabled: 403,
  continuation_lost: 400,
  confirm_elsewhere: 200,
  confirmed_elsewhere: 200,
  wrong_code: 422,
  pairing_exhausted: 400,
};

export async function action(args: ActionFunctionArgs) {
  const { context } = args;
  // The interaction is optional here: without it the link is still consumed (and the sign-in cannot go on).
  const gate = await passGate(args, { interaction: "optional" });
  const org = String(gate.form.get("org") ?? "");
  // One generic failure (invalid, expired, used, another organization's or sign-in's
  // link): its page comes from the URL's organization alone, never from the token nor from the
  // sign-in the address names, so a used link and a made-up one (any uid) show the same page with
  // the same way on. Pages for a link that did work (the sign-in cannot go on, the pairing) name
  // the application the sign-in came from.
  const visitor = visitorContext(context);
  const generic = await brandingForSlug(visitor, org);
  const language = await resolveLanguage(args.request, { organizationDefault: generic.defaultLocale });
  const answer = async (view: Outcome | "failed", status: number, extra: { token?: string } = {}) => {
    const end = view === "invalid" || view === "failed" ? generic : await brandingForSlug(visitor, org, { interactionUid: args.params.uid! });
    return data(
      { view, language, branding: end.branding, home: end.home, clientName: end.clientName, uid: args.params.uid!, org, csrf: context.services.csrf.tokenFor(args.params.uid!), token: "", ...extra },
      { status, headers: NO_STORE },
    );
  };
  if (!gate.open) return answer("failed", 400);
  const token = String(gate.form.get("token") ?? "");
  const input = { token, organizationSlug: org, interactionUid: gate.uid, meta: gate.meta };
  const code = gate.form.get("code");
  if (!gate.context && typeof code === "string") {
    const paired = await confirmMagicLinkElsewhere(gate.ctx, { ...input, code });
    return answer(paired.status, STATUS[paired.status], paired.status === "wrong_code" ? { token } : {});
  }
  const outcome = await magicLinkSignIn(gate.ctx, { ...input, at: gate.context });
  if (outcome.status === "signed_in") return redirect(outcome.redirectTo, { headers: NO_STORE });
  return answer(outcome.status, STATUS[outcome.status], outcome.status === "confirm_elsewhere" ? { token } : {});
}

export default function VerifyMagicLink() {
  const page = useLoaderData<typeof loader>();
  const result = useActionData<typeof action>();
  const nonce = useNonce();
  const { t } = useTranslation();
  if (result) {
    const card = (title: string, body: React.ReactNode) => (
      <AuthCard branding={result.branding} title={title}>
        {body}
      </AuthCard>
    );
    if (result.view === "confirm_elsewhere" || result.view === "wrong_code") {
      return card(
        t("magicLink.pairTitle"),
        <>
          <p>{t("magicLink.pairBody")}</p>
          <Form method="post" reloadDocument noValidate>
            <input type="hidden" name="csrf" value={result.csrf} />
            <input type="hidden" name="token" value={result.token} />
            <input type="hidden" name="org" value={result.org} />
            <Field
              name="code"
              label={t("magicLink.pairCode")}
              inputMode="numeric"
              autoComplete="off"
              autoFocus
              error={result.view === "wrong_code" ? t("magicLink.pairWrong") : undefined}
            />
            <button className="button" type="submit">
              {t("magicLink.pairSubmit")}
            </button>
          </Form>
          <p className="muted">{t("magicLink.pairNotYou")}</p>
        </>,
      );
    }
    if (result.view === "confirmed_elsewhere") return card(t("magicLink.pairedTitle"), <FormMessage tone="info">{t("magicLink.paired")}</FormMessage>);
    const message =
      result.view === "continuation_lost" ? t("magicLink.continuationLost") : result.view === "pairing_exhausted" ? t("magicLink.pairExhausted") : t("magicLink.invalid");
    // What happened, then the way back to the application to start again (never a dead end).
    return card(
      result.view === "continuation_lost" ? t("expired.title") : t("magicLink.invalidTitle"),
      <>
        <FormMessage tone="error">{message}</FormMessage>
        <BackToApplication home={result.home} clientName={result.clientName} />
      </>,
    );
  }
  return (
    <main className="page">
      <section className="card" aria-labelledby="page-title">
        <h1 id="page-title">{t("magicLink.confirmTitle")}</h1>
        <Form method="post" reloadDocument id="magic-link-confirm">
          <input type="hidden" name="csrf" value={page.csrf} />
          <input type="hidden" name="token" value={page.token} />
          <input type="hidden" name="org" value={page.org} />
          <button className="button" type="submit">
            {t("magicLink.confirm")}
          </button>
        </Form>
        <script nonce={nonce} dangerouslySetInnerHTML={{ __html: `document.getElementById("magic-link-confirm").requestSubmit()` }} />
      </section>
    </main>
  );
}
