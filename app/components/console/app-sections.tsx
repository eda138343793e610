import { Form, Link } from "@remix-run/react";
import { useState, type FormEvent } from "react";
import { useTranslation } from "react-i18next";
import type { z } from "zod";
import { appUpdateInput, moduleInput, type AppFormValues } from "./app-fields";
import { ConflictView, InputField } from "./detail-parts";
import { ListTable } from "./list-table";
import { zodFieldErrors } from "./forms";
import { ActionForm, ConfirmAction, Csrf, Notice } from "./ui";
import { ApplicationUpdateSchema, ModuleCreateSchema, ModuleUpdateSchema, type Application, type ApplicationModule } from "~/schemas/application";
import type { Client } from "~/schemas/client";

/** The sections of the console's application page (the claim definitions live in claim-section). */
export type FormErrors = Record<string, string>;

/** Validates a form in the browser with the schema the server uses; stops the post on errors. */
function useChecked(read: (form: FormData) => unknown, schema: z.ZodType) {
  const [errors, setErrors] = useState<FormErrors | null>(null);
  function onSubmit(event: FormEvent<HTMLFormElement>) {
    const parsed = schema.safeParse(read(new FormData(event.currentTarget)));
    if (parsed.success) return setErrors(null);
    event.preventDefault();
    setErrors(zodFieldErrors(parsed.error));
  }
  return { errors, onSubmit };
}

export function AppEditForm(props: { app: Application; version: number; values?: AppFormValues | undefined; errors: FormErrors; conflict?: Application | undefined }) {
  const { app, version, values, conflict } = props;
  const { t } = useTranslation("console");
  const checked = useChecked(appUpdateInput, ApplicationUpdateSchema);
  const errors = checked.errors ?? props.errors;
  if (conflict && values) {
    const rows = [
      { field: t("common.name"), now: conflict.name, yours: values.name },
      { field: t("apps.description"), now: conflict.description ?? "", yours: values.description ?? "" },
    ];
    return <ConflictView text={t("appDetail.conflictText")} rows={rows} />;
  }
  return (
    <Form method="post" reloadDocument noValidate onSubmit={checked.onSubmit} className="panel form" aria-labelledby="edit-app-title">
      <h2 id="edit-app-title">{t("appDetail.edit")}</h2>
      {errors.form ? <Notice kind="error">{errors.form}</Notice> : null}
      <Csrf />
      <input type="hidden" name="intent" value="update" />
      <input type="hidden" name="version" value={version} />
      <InputField id="app-name" name="name" label={t("common.name")} defaultValue={values?.name ?? app.name} error={errors.name} required />
      <InputField id="app-description" name="description" label={t("apps.description")} defaultValue={(values ? values.description : app.description) ?? ""} error={errors.description} multiline />
      <button type="submit" className="button button-inline">{t("common.save")}</button>
    </Form>
  );
}

function ModuleEdit({ module, values, errors: serverErrors }: { module: ApplicationModule; values?: AppFormValues | undefined; errors?: FormErrors | undefined }) {
  const { t } = useTranslation("console");
  const checked = useChecked(moduleInput, ModuleUpdateSchema);
  const errors = checked.errors ?? serverErrors ?? {};
  const prefix = `module-${module.id}`;
  return (
    <details className="confirm" open={Object.keys(errors).length > 0 || undefined}>
      <summary className="button button-inline button-secondary">{t("appDetail.editModule", { name: module.name })}</summary>
      <Form method="post" reloadDocument noValidate onSubmit={checked.onSubmit} className="confirm-panel form">
        <Csrf />
        <input type="hidden" name="intent" value="updateModule" />
        <input type="hidden" name="moduleId" value={module.id} />
        {errors.form ? <Notice kind="error">{errors.form}</Notice> : null}
        <InputField id={`${prefix}-name`} name="name" label={t("appDetail.moduleName")} defaultValue={values?.name ?? module.name} error={errors.name} required />
        <InputField id={`${prefix}-description`} name="description" label={t("apps.description")} defaultValue={(values ? values.description : module.description) ?? ""} error={errors.description} />
        <button type="submit" className="button button-inline">{t("common.save")}</button>
      </Form>
    </details>
  );
}

export function ModulesSection(props: { modules: ApplicationModule[]; failed?: { kind: "addModule" | "updateModule"; moduleId?: string | undefined; values: AppFormValues; errors: FormErrors } | undefined }) {
  const { modules, failed } = props;
  const { t } = useTranslation("console");
  const checked = useChecked(moduleInput, ModuleCreateSchema);
  const addFailed = failed?.kind === "addModule" ? failed : undefined;
  const errors = checked.errors ?? addFailed?.errors ?? {};
  return (
    <section className="panel" aria-labelledby="modules-title">
      <h2 id="modules-title">{t("appDetail.modules")}</h2>
      {modules.length === 0 ? (
        <p>{t("common.none")}</p>
      ) : (
        <div className="table-wrap">
          <table className="list">
            <thead>
              <tr>
                <th scope="col">{t("common.name")}</th>
                <th scope="col">{t("apps.description")}</th>
                <th scope="col">{t("common.status")}</th>
                <th scope="col">{t("common.actions")}</th>
              </tr>
            </thead>
            <tbody>
              {modules.map((m) => {
                const mine = failed?.kind === "updateModule" && failed.moduleId === m.id ? failed : undefined;
                return (
                  <tr key={m.id}>
                    <td>{m.name}</td>
                    <td>{m.description ?? ""}</td>
                    <td>{t(`users.status.${m.status}`)}</td>
                    <td>
                      <ModuleEdit module={m} values={mine?.values} errors={mine?.errors} />
                      {m.status === "active" ? (
                        <ConfirmAction intent="deactivateModule" label={t("appDetail.deactivateModule", { name: m.name })} question={t("appDetail.confirmDeactivateModule", { name: m.name })} fields={{ moduleId: m.id }} />
                      ) : (
                        <ActionForm intent="activateModule" fields={{ moduleId: m.id }}>
                          <button type="submit" className="button button-inline button-secondary">{t("appDetail.activateModule", { name: m.name })}</button>
                        </ActionForm>
                      )}
                      <ConfirmAction intent="deleteModule" label={t("appDetail.deleteModule", { name: m.name })} question={t("appDetail.confirmDeleteModule", { name: m.name })} fields={{ moduleId: m.id }} danger />
                    </td>
                  </tr>
                );
              })}
            </tbody>
          </table>
        </div>
      )}
      <Form method="post" reloadDocument noValidate onSubmit={checked.onSubmit} className="form" aria-labelledby="new-module-title">
        <h3 id="new-module-title">{t("appDetail.newModule")}</h3>
        {errors.form ? <Notice kind="error">{errors.form}</Notice> : null}
        <Csrf />
        <input type="hidden" name="intent" value="addModule" />
        <InputField id="module-name" name="name" label={t("appDetail.moduleName")} defaultValue={addFailed?.values.name} error={errors.name} required />
        <InputField id="module-description" name="description" label={t("apps.description")} defaultValue={addFailed?.values.description ?? ""} error={errors.description} />
        <button type="submit" className="button button-inline">{t("appDetail.addModule")}</button>
      </Form>
    </section>
  );
}

/** The application's clients, and the way to a new one that belongs to it. */
export function AppClients({ organizationId, applicationId, clients }: { organizationId: string; applicationId: string; clients: Client[] }) {
  const { t } = useTranslation("console");
  const clientsUrl = `/console/organizations/${organizationId}/clients`;
  return (
    <section className="panel" aria-labelledby="app-clients-title">
      <h2 id="app-clients-title">{t("appDetail.clients")}</h2>
      {clients.length === 0 ? (
        <p>{t("appDetail.noClients")}</p>
      ) : (
        <ListTable
          rows={clients}
          rowKey={(c) => c.id}
          caption={t("appDetail.clients")}
          columns={[
            { header: t("common.name"), cell: (c) => <Link to={`${clientsUrl}/${encodeURIComponent(c.id)}`}>{c.name}</Link> },
            { header: t("clients.id"), cell: (c) => <code>{c.id}</code> },
            { header: t("clients.type"), cell: (c) => t(`clients.types.${c.clientType}`) },
            { header: t("common.status"), cell: (c) => t(`users.status.${c.status}`) },
          ]}
        />
      )}
      <p>
        <Link to={`${clientsUrl}?applicationId=${applicationId}#new-client-title`}>{t("appDetail.newClient")}</Link>
      </p>
    </section>
  );
}

export function AppActions({ app }: { app: Application }) {
  const { t } = useTranslation("console");
  return (
    <section className="panel actions-panel" aria-label={t("common.actions")}>
      <ConfirmAction intent="delete" label={t("appDetail.delete")} question={t("appDetail.confirmDelete", { name: app.name })} danger />
    </section>
  );
}
