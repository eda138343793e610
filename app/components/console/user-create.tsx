import { Form } from "@remix-run/react";
import { useState, type FormEvent } from "react";
import { useTranslation } from "react-i18next";
import { UserCreateSchema } from "~/schemas/user";
import { zodFieldErrors } from "./forms";
import { Csrf, Notice, SelectField, TextField } from "./ui";
import { createFieldName as f, createFormErrors, createUserInput } from "./user-forms";

type Values = Partial<Record<"email" | "givenName" | "familyName" | "locale", string | undefined>> & { emailVerified?: boolean | undefined };

/** A password input: never pre-filled, so a password is not sent back into a page. */
export function PasswordField({ name, label, hint, error }: { name: string; label: string; hint?: string; error?: string | undefined }) {
  const described = [hint ? `${name}-hint` : "", error ? `${name}-error` : ""].filter(Boolean).join(" ") || undefined;
  return (
    <div className="field">
      <label htmlFor={name}>{label}</label>
      <input id={name} name={name} type="password" autoComplete="new-password" aria-invalid={error ? true : undefined} aria-describedby={described} />
      {hint ? <p id={`${name}-hint`} className="hint">{hint}</p> : null}
      {error ? <p id={`${name}-error`} className="field-error" role="alert">{error}</p> : null}
    </div>
  );
}

/** "Create a user" without an invitation, beside the invitation form of the users page. */
export function CreateUserForm({ values, errors: serverErrors }: { values: Values | undefined; errors: Record<string, string> }) {
  const { t } = useTranslation("console");
  const [clientErrors, setClientErrors] = useState<Record<string, string> | null>(null);
  const errors = clientErrors ?? serverErrors;

  function onSubmit(event: FormEvent<HTMLFormElement>) {
    const parsed = UserCreateSchema.safeParse(createUserInput(new FormData(event.currentTarget)));
    if (parsed.success) return setClientErrors(null);
    event.preventDefault();
    setClientErrors(createFormErrors(zodFieldErrors(parsed.error)));
  }

  return (
    <Form method="post" reloadDocument noValidate onSubmit={onSubmit} className="panel form" aria-labelledby="create-user-title">
      <h2 id="create-user-title">{t("userDetail.create.title")}</h2>
      <p className="hint">{t("userDetail.create.text")}</p>
      {errors.createForm ? <Notice kind="error">{errors.createForm}</Notice> : null}
      <Csrf />
      <input type="hidden" name="intent" value="create" />
      <TextField name={f("email")} label={t("users.email")} defaultValue={values?.email} error={errors[f("email")]} required />
      <TextField name={f("givenName")} label={t("users.givenName")} defaultValue={values?.givenName} error={errors[f("givenName")]} />
      <TextField name={f("familyName")} label={t("users.familyName")} defaultValue={values?.familyName} error={errors[f("familyName")]} />
      <PasswordField name={f("password")} label={t("userDetail.create.password")} hint={t("userDetail.create.passwordHint")} error={errors[f("password")]} />
      <SelectField
        name={f("locale")}
        label={t("userDetail.locale")}
        options={[
          { value: "", label: t("users.localeDefault") },
          { value: "en", label: "English" },
          { value: "de", label: "Deutsch" },
        ]}
        defaultValue={values?.locale ?? ""}
        error={errors[f("locale")]}
      />
      <div className="field">
        <label className="check">
          <input type="checkbox" name={f("emailVerified")} defaultChecked={values?.emailVerified === true} /> {t("userDetail.create.emailVerified")}
        </label>
      </div>
      <button type="submit" className="button button-inline">{t("userDetail.create.submit")}</button>
    </Form>
  );
}
