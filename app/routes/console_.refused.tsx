import { data, type LoaderFunctionArgs, type MetaFunction } from "@remix-run/node";
import { useLoaderData } from "@remix-run/react";
import { useTranslation } from "react-i18next";
import { consoleLanguage } from "~/.server/console/page";

export const meta: MetaFunction = () => [{ title: "Porta console" }, { name: "robots", content: "noindex" }];

export async function loader({ request }: LoaderFunctionArgs) {
  const reason = new URL(request.url).searchParams.get("reason") === "refused" ? "refused" : "failed";
  const language = await consoleLanguage(request);
  return data({ reason, language }, { status: reason === "refused" ? 403 : 400, headers: { "Cache-Control": "no-store" } });
}

export default function Refused() {
  const { reason } = useLoaderData<typeof loader>();
  const { t } = useTranslation("console");
  return (
    <main className="page">
      <section className="card" aria-labelledby="title">
        <h1 id="title">{reason === "refused" ? t("refused.title") : t("error.title")}</h1>
        <p>{reason === "refused" ? t("refused.text") : t("refused.failed")}</p>
        <p>
          <a className="button" href="/console">{t("refused.again")}</a>
        </p>
      </section>
    </main>
  );
}
