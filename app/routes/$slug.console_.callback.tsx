import { redirect, type LoaderFunctionArgs } from "@remix-run/node";
import { completeOrganizationSignIn } from "~/.server/console/organization-console";

/** The organization console's OIDC callback (its built-in client, Authorization Code + PKCE). */
export async function loader({ request, context, params }: LoaderFunctionArgs) {
  const slug = params.slug ?? "";
  const result = await completeOrganizationSignIn(context.services, slug, request);
  const headers = new Headers({ "Cache-Control": "no-store" });
  for (const cookie of result.cookies) headers.append("Set-Cookie", cookie);
  return redirect(result.ok ? result.location : `/${slug}/console/refused`, { headers });
}
