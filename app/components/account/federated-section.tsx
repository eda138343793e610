import { Form } from "@remix-run/react";
import { useTranslation } from "react-i18next";

/** The account page's links to other identity providers (decision 046): each with its provider and last use; removable after a recent sign-in. */
export type AccountLinksView = Array<{ id: string; provider: string; email: string | null; lastUsedAt: string | null }>;

export function FederatedSection({ page }: { page: { csrf: string; fresh: boolean; stepUpUrl: string; federated: AccountLinksView } }) {
  const { t } = useTranslation();
  if (page.federated.length === 0) return null;
  return (
    <section id="federated" className="card account-section" aria-labelledby="federated-title">
      <h2 id="federated-title">{t("account.federated.title")}</h2>
      <p>{t("account.federated.intro")}</p>
      {page.fresh ? null : (
        <p className="muted">
          <a href={page.stepUpUrl}>{t("account.federated.stepUp")}</a>
        </p>
      )}
      <ul className="account-list">
        {page.federated.map((link) => (
          <li key={link.id}>
            <p>
              <strong>{link.provider}</strong>
              {link.email ? ` · ${link.email}` : null}
            </p>
            <p className="muted">{link.lastUsedAt ? t("account.federated.lastUsed", { date: link.lastUsedAt }) : t("account.federated.neverUsed")}</p>
            {page.fresh ? (
              <Form method="post" reloadDocument className="inline-form">
                <input type="hidden" name="csrf" value={page.csrf} />
                <input type="hidden" name="intent" value="federated-remove" />
                <input type="hidden" name="link" value={link.id} />
                <button type="submit" className="button button-secondary button-inline" aria-label={t("account.federated.removeNamed", { provider: link.provider })}>
                  {t("account.federated.remove")}
                </button>
              </Form>
            ) : null}
          </li>
        ))}
      </ul>
    </section>
  );
}
