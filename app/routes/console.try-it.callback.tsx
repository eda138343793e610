import { data, type LoaderFunctionArgs, type MetaFunction } from "@remix-run/node";
import { Link, useLoaderData } from "@remix-run/react";
import { useTranslation } from "react-i18next";
import { consoleHeaders, NO_STORE, requireConsole } from "~/.server/console/page";
import { finishTryIt } from "~/.server/console/try-it";
import { Notice } from "~/components/console/ui";

export const headers = consoleHeaders;
export const meta: MetaFunction = () => [{ title: "Try it · Porta console" }];

/** Porta's own test page for "Try it" (app/.server/console/try-it.ts): the ID token a client got, verified. */
export async function loader(args: LoaderFunctionArgs) {
  const console = await requireConsole(args);
  const outcome = await finishTryIt(args.context.services, console, new URL(args.request.url));
  return data(outcome, { status: outcome.ok ? 200 : outcome.reason === "unknown" ? 404 : 400, headers: NO_STORE });
}

export default function TryItResult() {
  const outcome = useLoaderData<typeof loader>();
  const { t } = useTranslation("console");
  const back = outcome.orgId && outcome.clientId ? `/console/organizations/${outcome.orgId}/clients/${encodeURIComponent(outcome.clientId)}` : "/console/organizations";
  return (
    <>
      <h1>{t("tryIt.resultTitle")}</h1>
      {outcome.ok ? (
        <>
          <Notice kind="info">{t("tryIt.success", { alg: outcome.header.alg })}</Notice>
          <section className="panel" aria-labelledby="claims-title">
            <h2 id="claims-title">{t("tryIt.claims")}</h2>
            <table>
              <thead>
                <tr>
                  <th scope="col">{t("tryIt.claim")}</th>
                  <th scope="col">{t("tryIt.value")}</th>
                </tr>
              </thead>
              <tbody>
                {Object.entries(outcome.claims).map(([name, value]) => (
                  <tr key={name}>
                    <td>
                      <code>{name}</code>
                    </td>
                    <td>
                      <code>{typeof value === "string" ? value : JSON.stringify(value)}</code>
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
            <p className="hint">{t("tryIt.nextStep")}</p>
          </section>
        </>
      ) : (
        <Notice kind="error">
          {t(`tryIt.failed.${outcome.reason}`)}
          {outcome.detail ? (
            <>
              {" "}
              <code>{outcome.detail}</code>
            </>
          ) : null}
        </Notice>
      )}
      <p>
        <Link to={back}>{t("tryIt.back")}</Link>
      </p>
    </>
  );
}
