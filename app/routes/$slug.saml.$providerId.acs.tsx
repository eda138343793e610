import { data, redirect, type ActionFunctionArgs, type LoaderFunctionArgs, type MetaFunction } from "@remix-run/node";
import { useActionData } from "@remix-run/react";
import { FederationFailurePage } from "~/components/federation";
import { samlResponseReceived } from "~/.server/sign-in/flow";
import { unitOfWork } from "~/.server/sign-in/door";
import { resolveLanguage } from "~/.server/i18n";
import { brandingForSlug } from "~/.server/branding/pages";
import { interactionHeaders, NO_STORE, requestMeta } from "~/.server/sign-in/page";
import { SAML_RESPONSE_MAX_BASE64 } from "~/.server/federation/saml-response";
import { pageTitle } from "~/i18n/page-title";

export const headers = interactionHeaders;
export const meta: MetaFunction<typeof action> = ({ data }) => [{ title: pageTitle(data?.language, (m) => m.signIn.sso) }, { name: "robots", content: "noindex" }];

/** The form the IdP posts: SAMLResponse (at most SAML_RESPONSE_MAX_BASE64) and RelayState, URL-encoded. */
const MAX_FORM_BYTES = 3 * SAML_RESPONSE_MAX_BASE64 + 4096;

/** The posted form, or null when it is larger than any response Porta reads (the rest is not read). */
async function readForm(request: Request): Promise<URLSearchParams | null> {
  if (Number(request.headers.get("content-length") ?? 0) > MAX_FORM_BYTES || !request.body) return Number(request.headers.get("content-length") ?? 0) > 0 ? null : new URLSearchParams();
  const reader = request.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > MAX_FORM_BYTES) {
      await reader.cancel();
      return null;
    }
    chunks.push(value);
  }
  return new URLSearchParams(Buffer.concat(chunks).toString("utf8"));
}

/** GET: nothing is served here (an IdP answers by HTTP-POST). */
export function loader(_args: LoaderFunctionArgs) {
  return new Response("Not Found", { status: 404, headers: NO_STORE });
}

/**
 * POST {BASE_URL}/{slug}/saml/{providerId}/acs: the Assertion Consumer Service of one SAML
 * connection (decision 081). The IdP posts cross-site, so there is no interaction cookie here:
 * the RelayState names the pending sign-in, the response is checked, and the browser is sent on
 * (303) to its interaction's page, which signs in; every refusal gets the branded failure page.
 */
export async function action({ request, params, context }: ActionFunctionArgs) {
  const meta = requestMeta(context, "POST /{slug}/saml/{providerId}/acs");
  const ctx = unitOfWork(context.services, meta);
  const slug = params.slug ?? "";
  const form = await readForm(request);
  const outcome = await samlResponseReceived(ctx, {
    slug,
    providerId: params.providerId ?? "",
    samlResponse: form?.get("SAMLResponse") ?? "",
    relayState: form?.get("RelayState") ?? "",
    meta,
    oversized: form === null,
  });
  if (outcome.kind === "next") return redirect(outcome.to, { status: 303, headers: NO_STORE });
  const end = await brandingForSlug(ctx, slug);
  const language = await resolveLanguage(request, { organizationDefault: end.defaultLocale });
  const page = { language, branding: end.branding, home: end.home };
  if (outcome.kind === "rate_limited") {
    return data(
      { ...page, reason: "rate_limited" as const, provider: null, backTo: end.home, minutes: Math.ceil(outcome.retryAfterSeconds / 60) },
      { status: 429, headers: { ...NO_STORE, "Retry-After": String(outcome.retryAfterSeconds) } },
    );
  }
  if (outcome.kind === "unknown") return data({ ...page, reason: "unknown" as const, provider: null, backTo: end.home, minutes: undefined }, { status: 404, headers: NO_STORE });
  return data({ ...page, reason: outcome.reason, provider: outcome.providerName, backTo: outcome.backTo ?? end.home, minutes: undefined }, { status: 400, headers: NO_STORE });
}

export default function SamlAcs() {
  const page = useActionData<typeof action>();
  if (!page) return null;
  return <FederationFailurePage branding={page.branding} reason={page.reason} provider={page.provider} minutes={page.minutes} backTo={page.backTo} />;
}
