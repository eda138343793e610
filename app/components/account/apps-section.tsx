import { Form } from "@remix-run/react";
import { useTranslation } from "react-i18next";

/** The applications and agents a person gave access to, each with what it may do, and removing that access. */
export type AccountAppsView = Array<{ clientId: string; name: string; scopes: string[]; resources: Array<{ identifier: string; name: string | null; scopes: string[] }>; grantedAt: string }>;

export function AppsSection({ page }: { page: { csrf: string; branding: { name: string }; apps: AccountAppsView } }) {
  const { t } = useTranslation();
  return (
    <section id="apps" className="card account-section" aria-labelledby="apps-title">
      <h2 id="apps-title">{t("account.apps.title")}</h2>
      <p>{t("account.apps.intro", { organization: page.branding.name })}</p>
      {page.apps.length === 0 ? (
        <p className="muted">{t("account.apps.none")}</p>
      ) : (
        <ul className="account-list">
          {page.apps.map((app) => (
            <li key={app.clientId}>
              <p>
                <strong>{app.name}</strong>
              </p>
              <p className="muted">{t("account.apps.granted", { date: app.grantedAt })}</p>
              {app.scopes.length > 0 ? <p>{t("account.apps.scopes", { scopes: app.scopes.join(", ") })}</p> : null}
              {app.resources.map((resource) => (
                <p key={resource.identifier}>
                  {t("account.apps.resource", { name: resource.name ?? resource.identifier, scopes: resource.scopes.join(", ") })}
                </p>
              ))}
              <Form method="post" reloadDocument className="inline-form">
                <input type="hidden" name="csrf" value={page.csrf} />
                <input type="hidden" name="intent" value="app-revoke" />
                <input type="hidden" name="client" value={app.clientId} />
                <button type="submit" className="button button-secondary button-inline" aria-label={t("account.apps.removeNamed", { name: app.name })}>
                  {t("account.apps.remove")}
                </button>
              </Form>
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}
