import { type LoaderFunctionArgs, type MetaFunction } from "@remix-run/node";
import { useTranslation } from "react-i18next";
import { consoleLanguage } from "~/.server/console/page";

export const meta: MetaFunction = () => [{ title: "Porta console" }, { name: "robots", content: "noindex" }];

export async function loader({ request }: LoaderFunctionArgs) {
  return { language: await consoleLanguage(request) };
}

export default function SignedOut() {
  const { t } = useTranslation("console");
  return (
    <main className="page">
      <section className="card" aria-labelledby="title">
        <h1 id="title">{t("signedOut.title")}</h1>
        <p>{t("signedOut.text")}</p>
        <p>
          <a className="button" href="/console">{t("signedOut.again")}</a>
        </p>
      </section>
    </main>
  );
}
