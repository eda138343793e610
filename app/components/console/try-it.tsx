import { Form } from "@remix-run/react";
import { useTranslation } from "react-i18next";
import { Csrf } from "./ui";

export type TryItState = "ready" | "inactive" | "no_code_flow" | "signs_with_key" | "needs_redirect_uri";

/**
 * The client page's "Try it": one button that runs the code flow for this client against Porta's
 * test page and shows the ID token. When the test page is not one of the client's redirect URIs
 * yet, the button says that it adds it.
 */
export function TryItPanel({ state, redirectUri }: { state: TryItState; redirectUri: string }) {
  const { t } = useTranslation("console");
  if (state === "no_code_flow") return null;
  return (
    <section className="panel" aria-labelledby="try-it-title">
      <h2 id="try-it-title">{t("tryIt.title")}</h2>
      <p className="muted">{t("tryIt.text")}</p>
      {state === "ready" || state === "needs_redirect_uri" ? (
        <Form method="post" reloadDocument>
          <Csrf />
          <input type="hidden" name="intent" value={state === "ready" ? "tryIt" : "tryItAddRedirect"} />
          {state === "needs_redirect_uri" ? (
            <p className="hint">
              {t("tryIt.addsRedirect")} <code>{redirectUri}</code>
            </p>
          ) : null}
          <button type="submit" className="button button-inline">
            {state === "ready" ? t("tryIt.button") : t("tryIt.addAndTry")}
          </button>
        </Form>
      ) : (
        <p className="hint">{t(`tryIt.unavailable.${state}`)}</p>
      )}
    </section>
  );
}
