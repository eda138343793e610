import { data, redirect, type ActionFunctionArgs, type LoaderFunctionArgs, type MetaFunction } from "@remix-run/node";
import { useActionData } from "@remix-run/react";
import { FederationFailurePage } from "~/components/federation";
import { samlResponseReceived } from "~/.server/sign-in/flow";
import { unitOfWork } from "~/.server/sign-in/door";
import { resolveLanguage } from "~/.server/i18n";
import { brandingForSlug } from "~/.server/branding/pages";
import { interactionHeaders, NO_STORE, requestMeta } from "~/.server/sign-in/page";
import { SAML_RESPONSE_MAX_BASE64 } from "~/.server/federation/saml-response";
import { setIdpInitiatedMark } from "~/.server/federation/idp-initiated-cookie";
import { pageTitle } from "~/i18n/page-title";

export const headers = interactionHeaders;
export const meta: MetaFunction<typeof action> = ({ data }) => [{ title: pageTitle(data?.language, (m) => m.signIn.sso) }, { name: "robots", content: "noindex" }];

/** A field longer than this is not kept (the SAMLResponse is refused as too large, the RelayState still read). */
const MAX_FIELD_BYTES = SAML_RESPONSE_MAX_BASE64 + 1024;
/** Past this the rest of the body is not read at all. */
const MAX_BODY_BYTES = 4 * 1024 * 1024;

/**
 * The posted form (URL-encoded, ASCII), read field by field so that an oversized SAMLResponse
 * is dropped without being kept while the RelayState after it still names the sign-in.
 */
async function readForm(request: Request): Promise<{ fields: URLSearchParams; oversized: boolean }> {
  const fields = new URLSearchParams();
  let oversized = false;
  if (!request.body) return { fields, oversized };
  const reader = request.body.getReader();
  const decoder = new TextDecoder("latin1");
  let field = "";
  let dropped = false;
  let total = 0;
  const finish = () => {
    if (dropped) oversized = true;
    else if (field) for (const [name, value] of new URLSearchParams(field)) fields.append(name, value);
    field = "";
    dropped = false;
  };
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.byteLength;
    if (total > MAX_BODY_BYTES) {
      await reader.cancel();
      return { fields, oversized: true };
    }
    const parts = decoder.decode(value, { stream: true }).split("&");
    parts.forEach((part, index) => {
      if (index > 0) finish();
      if (dropped) return;
      field += part;
      if (field.length > MAX_FIELD_BYTES) {
        field = "";
        dropped = true;
      }
    });
  }
  finish();
  return { fields, oversized };
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
 * An IdP-initiated response, where the connection allows it, sends the browser to its
 * application's sign-in start instead, marked by a cookie (decision 083).
 */
export async function action({ request, params, context }: ActionFunctionArgs) {
  const meta = requestMeta(context, "POST /{slug}/saml/{providerId}/acs");
  const ctx = unitOfWork(context.services, meta);
  const slug = params.slug ?? "";
  const form = await readForm(request);
  const outcome = await samlResponseReceived(ctx, {
    slug,
    providerId: params.providerId ?? "",
    samlResponse: form.fields.get("SAMLResponse") ?? "",
    relayState: form.fields.get("RelayState") ?? "",
    meta,
    oversized: form.oversized,
  });
  if (outcome.kind === "next") return redirect(outcome.to, { status: 303, headers: NO_STORE });
  if (outcome.kind === "idp_initiated") {
    return redirect(outcome.to, { status: 303, headers: { ...NO_STORE, "Set-Cookie": setIdpInitiatedMark(context.services.config.baseUrl, outcome.mark) } });
  }
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
