import { useTranslation } from "react-i18next";
import type { FederatedIdentity } from "~/schemas/identity-provider";
import { ConfirmAction } from "./ui";

const utc = (iso: string) => `${iso.slice(0, 16).replace("T", " ")} UTC`;

/** The user page's links to upstream identity providers (decision 046); an administrator removes one. */
export function UserFederatedIdentities({ links }: { links: FederatedIdentity[] }) {
  const { t } = useTranslation("console");
  return (
    <section className="panel" aria-labelledby="federated-title">
      <h2 id="federated-title">{t("userLinks.title")}</h2>
      {links.length === 0 ? (
        <p className="muted">{t("userLinks.empty")}</p>
      ) : (
        <table>
          <thead>
            <tr>
              <th scope="col">{t("userLinks.provider")}</th>
              <th scope="col">{t("userLinks.email")}</th>
              <th scope="col">{t("userLinks.lastUsed")}</th>
              <th scope="col">
                <span className="visually-hidden">{t("common.actions")}</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {links.map((link) => (
              <tr key={link.id}>
                <td>{link.providerName}</td>
                <td>{link.email ?? ""}</td>
                <td>{link.lastUsedAt ? utc(link.lastUsedAt) : t("users.passkeys.never")}</td>
                <td>
                  <ConfirmAction
                    intent="deleteFederatedIdentity"
                    fields={{ linkId: link.id }}
                    label={t("userLinks.remove")}
                    question={t("userLinks.confirmRemove", { provider: link.providerName })}
                    danger
                  />
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
  );
}
