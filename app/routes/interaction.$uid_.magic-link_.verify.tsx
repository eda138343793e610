import { data, redirect, type ActionFunctionArgs, type LoaderFunctionArgs } from "@remix-run/node";
import { Form, useActionData, useLoaderData } from "@remix-run/react";
import { useTranslation } from "react-i18next";
import { useNonce } from "~/components/nonce";
import { consumeMagicLink } from "~/.server/auth/magic-link";
import { InteractionExpiredError, loadInteraction } from "~/.server/interaction/context";
import { NO_STORE, requestMeta } from "~/.server/interaction/request";
import { recordLoginSuccess } from "~/.server/auth/login-success";
import { recordLogin } from "~/.server/oidc/interaction-results";
import { resolveLanguage } from "~/.server/i18n";
import { readForm } from "~/.server/http/form";

/**
 * GET shows a page that consumes the link by POST (sent by script at once, or by the button
 * without script): mail scanners that prefetch links never use one up.
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

export async function action({ request, params, context }: ActionFunctionArgs) {
  const uid = params.uid!;
  const form = await readForm(request);
  const language = await resolveLanguage(request, {});
  const failure = (status: number) => data({ view: "failed" as const, language }, { status, headers: NO_STORE });
  if (!context.services.csrf.verify(uid, form.get("csrf"))) return failure(400);
  const meta = requestMeta(context, "POST /interaction/:uid/magic-link/verify");
  const consumed = await consumeMagicLink(context.services, {
    token: String(form.get("token") ?? ""),
    organizationSlug: String(form.get("org") ?? ""),
    interactionUid: uid,
    ip: meta.ip,
    requestId: meta.requestId,
  });
  if (!consumed.ok) return failure(consumed.reason === "method_disabled" ? 403 : 400);
  // The link is used from here on, whatever happens to the sign-in it was for.
  try {
    const ic = await loadInteraction(context.services, context.req, context.res, uid);
    if (ic.organization.id !== consumed.organizationId || ic.interaction.prompt.name !== "login") throw new InteractionExpiredError();
    const to = await recordLogin(ic.interaction, { accountId: consumed.userId, amr: ["email"] });
    await recordLoginSuccess(
      { prisma: context.services.db.prisma, audit: context.services.audit },
      { organizationId: consumed.organizationId, userId: consumed.userId, clientId: ic.client.id, method: "magic_link", ip: meta.ip, requestId: meta.requestId },
    );
    return redirect(to, { headers: NO_STORE });
  } catch (error) {
    if (!(error instanceof InteractionExpiredError)) throw error;
    return data({ view: "continuation_lost" as const, language }, { status: 400, headers: NO_STORE });
  }
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
