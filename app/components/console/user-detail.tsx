import { Form } from "@remix-run/react";
import { sessionColumns, type SessionRow } from "./session-columns";
import { useState, type FormEvent } from "react";
import { useTranslation } from "react-i18next";
import { ConflictView } from "./detail-parts";
import { UserUpdateSchema, type User } from "~/schemas/user";
import { zodFieldErrors } from "./forms";
import { ListTable } from "./list-table";
import { ConfirmAction, Csrf, Notice, SelectField, TextField } from "./ui";
import { updateUserInput } from "./user-forms";

/** The sections the user page adds to the console: profile edit with its conflict view, and sessions. */
export type UserEditValues = ReturnType<typeof updateUserInput>;

export type UserSession = SessionRow;

function localeOptions(t: (key: string) => string) {
  return [
    { value: "", label: t("userDetail.localeNone") },
    { value: "en", label: "English" },
    { value: "de", label: "Deutsch" },
  ];
}

export function UserEditForm({ user, version, values, errors: serverErrors }: { user: User; version: number; values: UserEditValues | null; errors: Record<string, string> }) {
  const { t } = useTranslation("console");
  const [clientErrors, setClientErrors] = useState<Record<string, string> | null>(null);
  const errors = clientErrors ?? serverErrors;

  function onSubmit(event: FormEvent<HTMLFormElement>) {
    const parsed = UserUpdateSchema.safeParse(updateUserInput(new FormData(event.currentTarget)));
    if (parsed.success) return setClientErrors(null);
    event.preventDefault();
    setClientErrors(zodFieldErrors(parsed.error));
  }

  return (
    <Form method="post" reloadDocument noValidate onSubmit={onSubmit} className="panel form" aria-labelledby="edit-user-title">
      <h2 id="edit-user-title">{t("userDetail.edit")}</h2>
      {errors.form ? <Notice kind="error">{errors.form}</Notice> : null}
      <Csrf />
      <input type="hidden" name="intent" value="update" />
      <input type="hidden" name="version" value={version} />
      <TextField name="email" label={t("users.email")} defaultValue={values?.email ?? user.email} error={errors.email} hint={t("userDetail.emailHint")} required />
      <TextField name="givenName" label={t("users.givenName")} defaultValue={values ? (values.givenName ?? "") : (user.givenName ?? "")} error={errors.givenName} />
      <TextField name="familyName" label={t("users.familyName")} defaultValue={values ? (values.familyName ?? "") : (user.familyName ?? "")} error={errors.familyName} />
      <SelectField name="locale" label={t("userDetail.locale")} options={localeOptions(t)} defaultValue={values ? (values.locale ?? "") : (user.locale ?? "")} error={errors.locale} />
      <button type="submit" className="button button-inline">{t("common.save")}</button>
    </Form>
  );
}

/** Someone saved the user meanwhile: what is saved now beside what this person typed; nothing was overwritten. */
export function UserConflictView({ current, values }: { current: User; values: UserEditValues }) {
  const { t } = useTranslation("console");
  const rows = [
    { field: t("users.email"), now: current.email, yours: values.email },
    { field: t("users.givenName"), now: current.givenName ?? "", yours: values.givenName ?? "" },
    { field: t("users.familyName"), now: current.familyName ?? "", yours: values.familyName ?? "" },
    { field: t("userDetail.locale"), now: current.locale ?? t("userDetail.localeNone"), yours: values.locale ?? t("userDetail.localeNone") },
  ];
  return (
    <ConflictView text={t("userDetail.conflictText")} rows={rows} />
  );
}

export function UserSessions({ sessions, error }: { sessions: UserSession[]; error: string | null }) {
  const { t } = useTranslation("console");
  return (
    <section className="panel" aria-labelledby="sessions-title">
      <h2 id="sessions-title">{t("userDetail.sessions.title")}</h2>
      {error ? <Notice kind="error">{error}</Notice> : null}
      {sessions.length === 0 ? (
        <p>{t("userDetail.sessions.none")}</p>
      ) : (
        <ListTable
          rows={sessions}
          rowKey={(s) => s.id}
          caption={t("userDetail.sessions.title")}
          columns={[
            ...sessionColumns(t, { user: false }),
            {
              header: t("common.actions"),
              cell: (s) => (
                <ConfirmAction
                  intent="revokeSession"
                  label={t("userDetail.sessions.revoke", { client: s.clientName ?? s.clientId ?? "—" })}
                  question={t("sessions.confirmRevoke")}
                  fields={{ sessionId: s.id }}
                  danger
                />
              ),
            },
          ]}
        />
      )}
    </section>
  );
}
