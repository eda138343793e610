import { redirect, type ActionFunctionArgs, type LoaderFunctionArgs } from "@remix-run/node";
import { NO_STORE, requireConsoleForm } from "~/.server/console/page";
import { languageCookie } from "~/.server/console/session";
import { safeReturnTo } from "~/.server/console/sign-in";
import { isSupportedLanguage } from "~/i18n/config";

/** POST only (with the session's CSRF token): remembers the chosen language and goes back to the page. */
export async function action(args: ActionFunctionArgs) {
  const { form } = await requireConsoleForm(args);
  const language = form.get("language");
  const back = safeReturnTo(typeof form.get("returnTo") === "string" ? String(form.get("returnTo")) : null);
  if (typeof language !== "string" || !isSupportedLanguage(language)) return redirect(back, { headers: NO_STORE });
  return redirect(back, { headers: { "Set-Cookie": languageCookie(args.context.services, language), ...NO_STORE } });
}

export function loader(_: LoaderFunctionArgs) {
  return redirect("/console");
}
