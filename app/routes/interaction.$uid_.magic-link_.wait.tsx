import { data, redirect, type MetaFunction, type LoaderFunctionArgs } from "@remix-run/node";
import { useLoaderData } from "@remix-run/react";
import { useTranslation } from "react-i18next";
import { pageTitle } from "~/i18n/page-title";
import { AuthCard } from "~/components/auth-card";
import { GateRefusalPage, isGateRefusal } from "~/components/gate-refusal";
import { MagicLinkWaiting } from "~/components/magic-link-waiting";
import { magicLinkConfirmedElsewhere, pairingCodeFor } from "~/.server/sign-in/flow";
import { passGate } from "~/.server/sign-in/door";
import { interactionHeaders, NO_STORE } from "~/.server/sign-in/page";

export const headers = interactionHeaders;
export const meta: MetaFunction<typeof loader> = ({ data }) => [{ title: pageTitle(data?.language, (m) => m.magicLink.title) }, { name: "robots", content: "noindex" }];

/**
 * GET /interaction/:uid/magic-link/wait: the asking browser's side of a link opened on another
 * device (decision 033). It passes the gate like every interaction page (only the browser that
 * holds the interaction gets here). A confirmed sign-in finishes here; an unconfirmed one shows
 * the number again. The page's script asks /interaction/:uid/magic-link/status first.
 */
export async function loader(args: LoaderFunctionArgs) {
  const gate = await passGate(args, { method: "magic_link", endpoint: "GET /interaction/:uid/magic-link/wait" });
  if (!gate.open) return gate.response;
  const redirectTo = await magicLinkConfirmedElsewhere(gate.ctx, { at: gate.context, meta: gate.meta });
  if (redirectTo) return redirect(redirectTo, { status: 303, headers: NO_STORE });
  return data({ view: "waiting" as const, ...gate.frame, pairingCode: await pairingCodeFor(gate.ctx, gate.uid) }, { headers: NO_STORE });
}

export default function MagicLinkWait() {
  const page = useLoaderData<typeof loader>();
  const { t } = useTranslation();
  if (isGateRefusal(page)) return <GateRefusalPage refusal={page} />;
  return (
    <AuthCard branding={page.branding} title={t("magicLink.title")}>
      <MagicLinkWaiting uid={page.uid} code={page.pairingCode} notYet />
      <p className="links">
        <a href={`/interaction/${page.uid}?method=magic_link`}>{t("magicLink.requestAgain")}</a>
      </p>
    </AuthCard>
  );
}
