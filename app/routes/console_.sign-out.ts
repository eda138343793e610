import { redirect, type ActionFunctionArgs } from "@remix-run/node";
import { signOut } from "~/.server/console/sign-out";

/** POST only: revokes the session's tokens and forgets the session. */
export async function action({ request, context }: ActionFunctionArgs) {
  const cookie = await signOut(context.services, request);
  return redirect("/console/signed-out", { headers: { "Set-Cookie": cookie, "Cache-Control": "no-store" } });
}

export function loader() {
  return redirect("/console");
}
