import { redirect, type LoaderFunctionArgs } from "@remix-run/node";
import { completeSignIn } from "~/.server/console/sign-in";

/** The console's OIDC callback (Authorization Code + PKCE with the shared admin client). */
export async function loader({ request, context }: LoaderFunctionArgs) {
  const result = await completeSignIn(context.services, request);
  const headers = new Headers({ "Cache-Control": "no-store" });
  for (const cookie of result.cookies) headers.append("Set-Cookie", cookie);
  return redirect(result.ok ? result.location : `/console/refused?reason=${result.reason}`, { headers });
}
