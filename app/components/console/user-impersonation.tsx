import { useTranslation } from "react-i18next";
import { Moment } from "./list-table";
import { ActionForm, CopyButton, SelectField, TextField } from "./ui";

/** The fields of the impersonation form whose errors show next to them. */
export const IMPERSONATION_FIELDS = ["clientId", "reason", "minutes"] as const;
const MINUTES = ["5", "15", "30", "60"];

export interface IssuedImpersonation {
  accessToken: string;
  expiresAt: string;
  clientId: string;
  scope: string;
}

/**
 * "Act as this user" (decision 053): a client of the organization, a reason the person will see
 * on their account page, and a lifetime of at most an hour. The token appears once, in the answer.
 */
export function UserImpersonation(props: { clients: Array<{ id: string; name: string }>; errors: Record<string, string>; issued: IssuedImpersonation | null }) {
  const { clients, errors, issued } = props;
  const { t } = useTranslation("console");
  return (
    <section className="panel" aria-labelledby="impersonate-title">
      <h2 id="impersonate-title">{t("impersonation.title")}</h2>
      <p>{t("impersonation.text")}</p>
      {issued ? (
        <div className="panel secret" role="status">
          <p>
            {t("impersonation.issued", { client: clients.find((c) => c.id === issued.clientId)?.name ?? issued.clientId })} <Moment iso={issued.expiresAt} />.{" "}
            {t("impersonation.shownOnce")}
          </p>
          <div className="field">
            <label htmlFor="impersonation-token">{t("impersonation.token")}</label>
            <textarea id="impersonation-token" readOnly rows={5} value={issued.accessToken} className="secret-value" />
            <p className="hint">{t("impersonation.scope", { scope: issued.scope })}</p>
          </div>
          <CopyButton value={issued.accessToken} label={t("impersonation.copy")} />
        </div>
      ) : null}
      {errors.form ? <p className="field-error" role="alert">{errors.form}</p> : null}
      {clients.length === 0 ? (
        <p>{t("impersonation.noClients")}</p>
      ) : (
        <ActionForm intent="impersonate" className="inline-form">
          <SelectField name="clientId" label={t("impersonation.client")} options={clients.map((c) => ({ value: c.id, label: c.name }))} defaultValue={clients[0]!.id} error={errors.clientId} />
          <TextField name="reason" label={t("impersonation.reason")} hint={t("impersonation.reasonHint")} error={errors.reason} required />
          <SelectField name="minutes" label={t("impersonation.minutes")} options={MINUTES.map((m) => ({ value: m, label: t("impersonation.minutesOption", { count: Number(m) }) }))} defaultValue="15" error={errors.minutes} />
          <button type="submit" className="button button-inline">{t("impersonation.button")}</button>
        </ActionForm>
      )}
    </section>
  );
}
