import { Form } from "@remix-run/react";
import { useTranslation } from "react-i18next";
import { PasskeyRegister } from "~/components/passkey";

/** The account page's passkeys: each with its name, creation and last use; add (script), rename and remove (plain forms). */
export interface AccountPasskeysView {
  list: Array<{ id: string; name: string; synced: boolean; createdAt: string; lastUsedAt: string | null }>;
  max: number;
  mayAdd: boolean;
  mayRemove: boolean;
}

export function PasskeysSection({ page }: { page: { csrf: string; slug: string; fresh: boolean; stepUpUrl: string; passkeys: AccountPasskeysView } }) {
  const { t } = useTranslation();
  const { passkeys } = page;
  return (
    <section id="passkeys" className="card account-section" aria-labelledby="passkeys-title">
      <h2 id="passkeys-title">{t("account.passkeys.title")}</h2>
      <p>{t("account.passkeys.intro")}</p>
      {page.fresh ? null : (
        <p className="muted">
          <a href={page.stepUpUrl}>{t("account.passkeys.stepUp")}</a>
        </p>
      )}
      {passkeys.list.length === 0 ? (
        <p className="muted">{t("account.passkeys.none")}</p>
      ) : (
        <ul className="account-list">
          {passkeys.list.map((p) => (
            <li key={p.id} className="account-passkey">
              <p>
                <strong>{p.name}</strong>
                {p.synced ? <span className="badge">{t("account.passkeys.synced")}</span> : null}
              </p>
              <p className="muted">
                {[t("account.passkeys.created", { date: p.createdAt }), p.lastUsedAt ? t("account.passkeys.lastUsed", { date: p.lastUsedAt }) : t("account.passkeys.neverUsed")].join(" · ")}
              </p>
              {page.fresh ? (
                <div className="inline-forms">
                  <Form method="post" reloadDocument className="inline-form">
                    <input type="hidden" name="csrf" value={page.csrf} />
                    <input type="hidden" name="intent" value="passkey-rename" />
                    <input type="hidden" name="passkey" value={p.id} />
                    <label htmlFor={`passkey-name-${p.id}`} className="visually-hidden">
                      {t("account.passkeys.newName", { name: p.name })}
                    </label>
                    <input id={`passkey-name-${p.id}`} name="name" defaultValue={p.name} maxLength={64} required />
                    <button className="button button-secondary button-inline" type="submit">
                      {t("account.passkeys.rename")}
                    </button>
                  </Form>
                  {passkeys.mayRemove ? (
                    <Form method="post" reloadDocument className="inline-form">
                      <input type="hidden" name="csrf" value={page.csrf} />
                      <input type="hidden" name="intent" value="passkey-remove" />
                      <input type="hidden" name="passkey" value={p.id} />
                      <button className="button button-secondary button-inline" type="submit" aria-label={t("account.passkeys.removeNamed", { name: p.name })}>
                        {t("account.passkeys.remove")}
                      </button>
                    </Form>
                  ) : null}
                </div>
              ) : null}
            </li>
          ))}
        </ul>
      )}
      {page.fresh && passkeys.mayAdd ? <PasskeyRegister endpoint={`/${page.slug}/account/passkeys`} csrf={page.csrf} done={`/${page.slug}/account?done=passkey_added#passkeys`} /> : null}
      {!passkeys.mayAdd ? <p className="muted">{t("account.passkeys.limit", { count: passkeys.max })}</p> : null}
    </section>
  );
}
