import { data, redirect, type ActionFunctionArgs, type LoaderFunctionArgs } from "@remix-run/node";
import { Form, useActionData, useLoaderData } from "@remix-run/react";
import { useTranslation } from "react-i18next";
import { useNonce } from "~/components/nonce";
import { signInWithMagicLink } from "~/.server/auth/magic-link";
import { passGate } from "~/.server/interaction/gate";
import { NO_STORE } from "~/.server/interaction/request";
import { resolveLanguage } from "~/.server/i18n";

/**
 * GET shows a page that consumes the link by POST (sent by script at once, or by the button
 * without script): mail scanners that prefetch links never use one up. It needs no interaction
 * (a scanner has none), so it does not pass the gate; the POST does.
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

export async function action(args: ActionFunctionArgs) {
  const { request } = args;
  const language = await resolveLanguage(request, {});
  const failure = (status: number) => data({ view: "failed" as const, language }, { status, headers: NO_STORE });
  // The interaction is optional here: without it the link is still consumed (and the sign-in cannot go on).
  const gate = await passGate(args, { interaction: "optional" });
  if (!gate.open) return failure(400);
  const outcome = await signInWithMagicLink(args.context.services, {
    token: String(gate.form.get("token") ?? ""),
    organizationSlug: String(gate.form.get("org") ?? ""),
    interactionUid: gate.uid,
    at: gate.context,
    meta: gate.meta,
  });
  if (outcome.status === "signed_in") return redirect(outcome.redirectTo, { headers: NO_STORE });
  if (outcome.status === "continuation_lost") return data({ view: "continuation_lost" as const, language }, { status: 400, headers: NO_STORE });
  return failure(outcome.status === "method_disabled" ? 403 : 400);
}

export default function VerifyMagicLink() {
  const page = useLoaderData<typeof loader>();
  const result = useActionData<typeof action>();
  const nonce = useNonce();
  const { t } = useTranslation();
  if (result) {
    return (
      <main className="page">
        <section className="card" aria-labelledby="page-title">
          <h1 id="page-title">{result.view === "failed" ? t("magicLink.invalidTitle") : t("expired.title")}</h1>
          <p>{result.view === "failed" ? t("magicLink.invalid") : t("magicLink.continuationLost")}</p>
        </section>
      </main>
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
