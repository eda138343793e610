import type { LoaderFunctionArgs } from "@remix-run/node";
import { z } from "zod";
import { samlMetadata } from "~/.server/sign-in/flow";
import { unitOfWork } from "~/.server/sign-in/door";
import { requestMeta } from "~/.server/sign-in/page";

const ProviderId = z.uuid();

/**
 * GET {BASE_URL}/{slug}/saml/{providerId}/metadata: the SP metadata of one SAML connection
 * (decision 081), which is also its entity ID. 404 for an unknown, disabled or other
 * organization's connection, and for a provider of another kind.
 */
export async function loader({ request, params, context }: LoaderFunctionArgs) {
  const providerId = ProviderId.safeParse(params.providerId);
  const notFound = () => new Response("Not Found", { status: 404, headers: { "Content-Type": "text/plain; charset=utf-8", "Cache-Control": "no-store" } });
  if (!providerId.success) return notFound();
  const ctx = unitOfWork(context.services, requestMeta(context, `${request.method} /{slug}/saml/{providerId}/metadata`));
  const xml = await samlMetadata(ctx, params.slug ?? "", providerId.data);
  if (!xml) return notFound();
  return new Response(xml, { status: 200, headers: { "Content-Type": "application/samlmetadata+xml; charset=utf-8", "Cache-Control": "public, max-age=300" } });
}
