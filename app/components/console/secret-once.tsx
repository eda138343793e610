import { useState } from "react";
import { useTranslation } from "react-i18next";

/**
 * A client secret in the one response that carries it: shown in a read-only field with a copy
 * button. Never render it from a loader; the page that shows it is not cached.
 */
export function SecretOnce({ secret }: { secret: string }) {
  const { t } = useTranslation("console");
  const [status, setStatus] = useState("");
  const copy = () =>
    navigator.clipboard.writeText(secret).then(
      () => setStatus(t("clients.copied")),
      () => setStatus(t("clients.copyFailed")),
    );
  return (
    <section className="panel secret" aria-labelledby="secret-title">
      <h2 id="secret-title">{t("clients.secretTitle")}</h2>
      <p>{t("clients.secretText")}</p>
      <div className="field">
        <label htmlFor="client-secret">{t("clients.secret")}</label>
        <input id="client-secret" readOnly value={secret} className="secret-value" onFocus={(e) => e.currentTarget.select()} />
      </div>
      <button type="button" className="button button-inline" onClick={copy}>{t("clients.copy")}</button>
      <p className="hint" aria-live="polite">{status}</p>
    </section>
  );
}
