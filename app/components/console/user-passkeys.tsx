import { useTranslation } from "react-i18next";
import { ConfirmAction } from "./ui";

/** The user page's passkeys (decision 041): name, authenticator type, created, last used; an administrator deletes one. */
export interface ConsolePasskey {
  id: string;
  name: string;
  deviceType: "singleDevice" | "multiDevice";
  createdAt: string;
  lastUsedAt: string | null;
}

export function UserPasskeys({ passkeys, email }: { passkeys: ConsolePasskey[]; email: string }) {
  const { t } = useTranslation("console");
  return (
    <section className="panel" aria-labelledby="passkeys-title">
      <h2 id="passkeys-title">{t("users.passkeys.title")}</h2>
      {passkeys.length === 0 ? (
        <p className="muted">{t("users.passkeys.none")}</p>
      ) : (
        <table>
          <thead>
            <tr>
              <th scope="col">{t("users.passkeys.name")}</th>
              <th scope="col">{t("users.passkeys.type")}</th>
              <th scope="col">{t("users.passkeys.created")}</th>
              <th scope="col">{t("users.passkeys.lastUsed")}</th>
              <th scope="col">
                <span className="visually-hidden">{t("users.passkeys.actions")}</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {passkeys.map((p) => (
              <tr key={p.id}>
                <td>{p.name}</td>
                <td>{t(`users.passkeys.${p.deviceType}`)}</td>
                <td>{new Date(p.createdAt).toISOString().slice(0, 16).replace("T", " ")} UTC</td>
                <td>{p.lastUsedAt ? `${new Date(p.lastUsedAt).toISOString().slice(0, 16).replace("T", " ")} UTC` : t("users.passkeys.never")}</td>
                <td>
                  <ConfirmAction
                    intent="deletePasskey"
                    fields={{ passkeyId: p.id }}
                    label={t("users.passkeys.delete", { name: p.name })}
                    question={t("users.passkeys.confirmDelete", { name: p.name, email })}
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
