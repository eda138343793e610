import { Form } from "@remix-run/react";
import { useState, type FormEvent } from "react";
import { useTranslation } from "react-i18next";
import { ConflictView } from "./detail-parts";
import { RoleUpdateSchema, type Role } from "~/schemas/rbac";
import { zodFieldErrors } from "./forms";
import { Csrf, Notice, TextField } from "./ui";
import { roleUpdateInput } from "./user-forms";

/** The role page's edit form and its conflict view. */
export type RoleEditValues = ReturnType<typeof roleUpdateInput>;

export function RoleEditForm({ role, version, values, errors: serverErrors }: { role: Role; version: number; values: RoleEditValues | null; errors: Record<string, string> }) {
  const { t } = useTranslation("console");
  const [clientErrors, setClientErrors] = useState<Record<string, string> | null>(null);
  const errors = clientErrors ?? serverErrors;

  function onSubmit(event: FormEvent<HTMLFormElement>) {
    const parsed = RoleUpdateSchema.safeParse(roleUpdateInput(new FormData(event.currentTarget)));
    if (parsed.success) return setClientErrors(null);
    event.preventDefault();
    setClientErrors(zodFieldErrors(parsed.error));
  }

  return (
    <Form method="post" reloadDocument noValidate onSubmit={onSubmit} className="panel form" aria-labelledby="edit-role-title">
      <h2 id="edit-role-title">{t("roleDetail.edit")}</h2>
      {errors.form ? <Notice kind="error">{errors.form}</Notice> : null}
      <Csrf />
      <input type="hidden" name="intent" value="update" />
      <input type="hidden" name="version" value={version} />
      <TextField name="name" label={t("common.name")} defaultValue={values?.name ?? role.name} error={errors.name} required />
      <TextField name="description" label={t("apps.description")} defaultValue={values ? (values.description ?? "") : (role.description ?? "")} error={errors.description} />
      <button type="submit" className="button button-inline">{t("common.save")}</button>
    </Form>
  );
}

export function RoleConflictView({ current, values }: { current: Role; values: RoleEditValues }) {
  const { t } = useTranslation("console");
  const rows = [
    { field: t("common.name"), now: current.name, yours: values.name },
    { field: t("apps.description"), now: current.description ?? "", yours: values.description ?? "" },
  ];
  return (
    <ConflictView text={t("roleDetail.conflictText")} rows={rows} />
  );
}
