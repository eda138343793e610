import { data, redirect, type ActionFunctionArgs, type LoaderFunctionArgs, type MetaFunction } from "@remix-run/node";
import { useTranslation } from "react-i18next";
import { consoleLanguage } from "~/.server/console/page";
import { signOut } from "~/.server/console/sign-out";
import { isAfterAction } from "~/.server/sign-in/page";

export const meta: MetaFunction = () => [{ title: "Porta console" }, { name: "robots", content: "noindex" }];

/** POST only: revokes the session's tokens and forgets the session. */
export async function action({ request, context }: ActionFunctionArgs) {
  const result = await signOut(context.services, request);
  if (!result.ok) return data({ language: await consoleLanguage(request) }, { status: 403, headers: { "Cache-Control": "no-store" } });
  return redirect("/console/signed-out", { headers: { "Set-Cookie": result.cookie, "Cache-Control": "no-store" } });
}

/** Nothing to show on a GET; after a refused POST, Remix runs this loader to render the refusal. */
export function loader({ context }: LoaderFunctionArgs) {
  return isAfterAction(context) ? null : redirect("/console");
}

/** Shown only when the sign-out form carried no valid CSRF token. */
export default function SignOutRefused() {
  const { t } = useTranslation("console");
  return (
    <main className="page">
      <section className="card" aria-labelledby="title">
        <h1 id="title">{t("error.title")}</h1>
        <p>{t("error.csrf")}</p>
        <p>
          <a href="/console">{t("nav.dashboard")}</a>
        </p>
      </section>
    </main>
  );
}
