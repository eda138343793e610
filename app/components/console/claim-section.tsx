import { Form } from "@remix-run/react";
import { useState, type FormEvent } from "react";
import { useTranslation } from "react-i18next";
import { text, zodFieldErrors } from "./forms";
import { Csrf, Notice, SelectField, TextField } from "./ui";
import { CLAIM_TYPE_VALUES, CustomClaimCreateSchema, type CustomClaim } from "~/schemas/claim";

/** The custom claim definitions of an application: their list and the form for a new one. */
export function claimInput(form: FormData) {
  const description = text(form, "description")?.trim();
  return { claimName: text(form, "claimName") ?? "", claimType: text(form, "claimType"), scope: text(form, "scope") ?? "", ...(description ? { description } : {}) };
}

export type ClaimValues = ReturnType<typeof claimInput>;

export const CLAIM_FIELDS = ["claimName", "claimType", "scope", "description"];

export function ClaimsSection({ claims, values, errors: serverErrors }: { claims: CustomClaim[]; values?: ClaimValues | undefined; errors?: Record<string, string> | undefined }) {
  const { t } = useTranslation("console");
  const [clientErrors, setClientErrors] = useState<Record<string, string> | null>(null);
  const errors: Record<string, string> = clientErrors ?? serverErrors ?? {};

  function onSubmit(event: FormEvent<HTMLFormElement>) {
    const parsed = CustomClaimCreateSchema.safeParse(claimInput(new FormData(event.currentTarget)));
    if (parsed.success) return setClientErrors(null);
    event.preventDefault();
    setClientErrors(zodFieldErrors(parsed.error));
  }

  return (
    <>
      <h2>{t("claims.title")}</h2>
      {claims.length === 0 ? (
        <p>{t("common.none")}</p>
      ) : (
        <div className="table-wrap">
          <table className="list">
            <thead>
              <tr>
                <th scope="col">{t("claims.claimName")}</th>
                <th scope="col">{t("claims.claimType")}</th>
                <th scope="col">{t("claims.scope")}</th>
                <th scope="col">{t("apps.description")}</th>
              </tr>
            </thead>
            <tbody>
              {claims.map((c) => (
                <tr key={c.id}>
                  <td><code>{c.claimName}</code></td>
                  <td>{c.claimType}</td>
                  <td><code>{c.scope}</code></td>
                  <td>{c.description ?? ""}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      <Form method="post" reloadDocument noValidate onSubmit={onSubmit} className="panel form" aria-labelledby="new-claim-title">
        <h2 id="new-claim-title">{t("claims.new")}</h2>
        {errors.form ? <Notice kind="error">{errors.form}</Notice> : null}
        <Csrf />
        <input type="hidden" name="intent" value="createClaim" />
        <TextField name="claimName" label={t("claims.claimName")} defaultValue={values?.claimName} error={errors.claimName} required />
        <SelectField name="claimType" label={t("claims.claimType")} options={CLAIM_TYPE_VALUES.map((v) => ({ value: v, label: v }))} defaultValue={values?.claimType ?? "string"} error={errors.claimType} />
        <TextField name="scope" label={t("claims.scope")} defaultValue={values?.scope} error={errors.scope} hint={t("claims.scopeHint")} required />
        <TextField name="description" label={t("apps.description")} defaultValue={values?.description} error={errors.description} />
        <button type="submit" className="button button-inline">{t("claims.create")}</button>
      </Form>
    </>
  );
}
