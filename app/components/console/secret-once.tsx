import { useTranslation } from "react-i18next";
import { CopyButton } from "./ui";

/**
 * A client secret in the one response that carries it: shown in a read-only field with a copy
 * button. Never render it from a loader; the page that shows it is not cached.
 */
export function SecretOnce({ secret }: { secret: string }) {
  const { t } = useTranslation("console");
  return (
    <section className="panel secret" aria-labelledby="secret-title">
      <h2 id="secret-title">{t("clients.secretTitle")}</h2>
      <p>{t("clients.secretText")}</p>
      <div className="field">
        <label htmlFor="client-secret">{t("clients.secret")}</label>
        <input id="client-secret" readOnly value={secret} className="secret-value" onFocus={(e) => e.currentTarget.select()} />
      </div>
      <CopyButton value={secret} label={t("clients.copy")} />
    </section>
  );
}
