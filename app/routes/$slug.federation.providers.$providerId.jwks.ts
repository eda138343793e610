import type { LoaderFunctionArgs } from "@remix-run/node";
import { publishedClientJwks } from "~/.server/federation/providers";
import { visitorContext } from "~/.server/sign-in/door";

/**
 * GET {BASE_URL}/{slug}/federation/providers/{id}/jwks: the public key a private_key_jwt
 * connection signs its client assertions with (decision 082), to register at the upstream as
 * the client's jwks_uri. Public like any JWKS; 404 for what the organization does not publish.
 */
export async function loader({ params, context }: LoaderFunctionArgs) {
  const jwks = await publishedClientJwks(visitorContext(context), params.slug ?? "", params.providerId ?? "");
  if (!jwks) return Response.json({ error: "not_found" }, { status: 404, headers: { "Cache-Control": "no-store" } });
  // Short caching: a key replaced by switching methods is picked up within minutes.
  return Response.json(jwks, { headers: { "Content-Type": "application/jwk-set+json", "Cache-Control": "public, max-age=300" } });
}
