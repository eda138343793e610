import { data, redirect, type ActionFunctionArgs, type LoaderFunctionArgs, type MetaFunction } from "@remix-run/node";
import { Form, Link, useActionData, useLoaderData } from "@remix-run/react";
import { useState, type FormEvent } from "react";
import { useTranslation } from "react-i18next";
import { consoleHeaders, NO_STORE, requireConsole, requireConsoleForm } from "~/.server/console/page";
import { ListTable } from "~/components/console/list-table";
import { detailErrors, list, text, zodFieldErrors } from "~/components/console/forms";
import { ActionMenu, CheckboxGroup, ConfirmAction, Csrf, Notice, TextField } from "~/components/console/ui";
import { PermissionCreateSchema, RoleCreateSchema } from "~/schemas/rbac";

export const headers = consoleHeaders;
export const meta: MetaFunction = () => [{ title: "Roles and permissions · Porta console" }];

export async function loader(args: LoaderFunctionArgs) {
  const console = await requireConsole(args);
  const orgId = args.params.id!;
  const [org, roles, permissions] = await Promise.all([
    console.admin("organizations.get", { params: { id: orgId } }),
    console.admin("roles.list", { query: { organizationId: orgId, limit: "100" } }),
    console.admin("permissions.list", { query: { organizationId: orgId, limit: "100" } }),
  ]);
  if (!org.ok) throw data({ message: org.error.code }, { status: org.status === 422 ? 404 : org.status });
  return data(
    { org: org.body, roles: roles.ok ? roles.body.data : [], permissions: permissions.ok ? permissions.body.data : [], done: new URL(args.request.url).searchParams.get("done") },
    { headers: NO_STORE },
  );
}

function roleInput(form: FormData, organizationId: string) {
  const description = text(form, "description")?.trim();
  return { organizationId, name: text(form, "name") ?? "", ...(description ? { description } : {}), permissionIds: list(form, "permissionIds") };
}

function permissionInput(form: FormData, organizationId: string) {
  const description = text(form, "permissionDescription")?.trim();
  return { organizationId, name: text(form, "permissionName") ?? "", ...(description ? { description } : {}) };
}

/** Permission fields carry a prefix in the form (one page, two forms); the API names them plainly. */
const prefixed = (errors: Record<string, string>) =>
  Object.fromEntries(Object.entries(errors).map(([k, v]) => [k === "form" ? "permissionForm" : `permission${k[0]!.toUpperCase()}${k.slice(1)}`, v]));

export async function action(args: ActionFunctionArgs) {
  const { console, form } = await requireConsoleForm(args);
  const orgId = args.params.id!;
  if (form.get("intent") === "deletePermission") {
    const id = String(form.get("permissionId") ?? "");
    // Only a permission this page listed: the address names the organization.
    const permission = await console.admin("permissions.get", { params: { id } });
    if (!permission.ok || permission.body.organizationId !== orgId) return data({ errors: { deleteForm: permission.ok ? "not found" : permission.error.message } }, { status: permission.ok ? 404 : permission.status, headers: NO_STORE });
    const deleted = await console.admin("permissions.delete", { params: { id } });
    if (!deleted.ok) return data({ errors: { deleteForm: deleted.error.message } }, { status: deleted.status, headers: NO_STORE });
    return redirect(`/console/organizations/${orgId}/roles?done=permissionDeleted`);
  }
  if (form.get("intent") === "createPermission") {
    const input = permissionInput(form, orgId);
    const parsed = PermissionCreateSchema.safeParse(input);
    if (!parsed.success) return data({ errors: prefixed(zodFieldErrors(parsed.error)) }, { status: 422, headers: NO_STORE });
    const created = await console.admin("permissions.create", { body: parsed.data });
    if (!created.ok) return data({ errors: prefixed(created.error.details ? detailErrors(created.error.details, ["name", "description"]) : { form: created.error.message }) }, { status: created.status, headers: NO_STORE });
    return redirect(`/console/organizations/${orgId}/roles?done=permission`);
  }
  const input = roleInput(form, orgId);
  const parsed = RoleCreateSchema.safeParse(input);
  if (!parsed.success) return data({ errors: zodFieldErrors(parsed.error) }, { status: 422, headers: NO_STORE });
  const created = await console.admin("roles.create", { body: parsed.data });
  if (!created.ok) return data({ errors: created.error.details ? detailErrors(created.error.details, ["name", "description", "permissionIds"]) : { form: created.error.message } }, { status: created.status, headers: NO_STORE });
  return redirect(`/console/organizations/${orgId}/roles?done=role`);
}

export default function Roles() {
  const { org, roles, permissions, done } = useLoaderData<typeof loader>();
  const result = useActionData<typeof action>();
  const { t } = useTranslation("console");
  const [clientErrors, setClientErrors] = useState<Record<string, string> | null>(null);
  const errors: Record<string, string> = clientErrors ?? result?.errors ?? {};

  function onRoleSubmit(event: FormEvent<HTMLFormElement>) {
    const parsed = RoleCreateSchema.safeParse(roleInput(new FormData(event.currentTarget), org.id));
    if (parsed.success) return setClientErrors(null);
    event.preventDefault();
    setClientErrors(zodFieldErrors(parsed.error));
  }

  function onPermissionSubmit(event: FormEvent<HTMLFormElement>) {
    const parsed = PermissionCreateSchema.safeParse(permissionInput(new FormData(event.currentTarget), org.id));
    if (parsed.success) return setClientErrors(null);
    event.preventDefault();
    setClientErrors(prefixed(zodFieldErrors(parsed.error)));
  }

  return (
    <>
      <p className="breadcrumb"><Link to={`/console/organizations/${org.id}`}>{org.name}</Link></p>
      <h1>{t("roles.title")}</h1>
      {done ? <Notice kind="info">{t(done === "permissionDeleted" ? "roleDetail.permissionDeleted" : `roles.done.${done}`)}</Notice> : null}
      {errors.deleteForm ? <Notice kind="error">{errors.deleteForm}</Notice> : null}
      <ListTable
        rows={roles}
        rowKey={(r) => r.id}
        empty={t("empty.roles")}
        caption={t("roles.roles")}
        columns={[
          { header: t("common.name"), cell: (r) => <Link to={`/console/organizations/${org.id}/roles/${r.id}`}><code>{r.name}</code></Link> },
          { header: t("apps.description"), cell: (r) => r.description ?? "" },
          { header: t("roles.permissions"), cell: (r) => r.permissions.map((p) => p.name).join(", ") },
        ]}
      />
      <section className="panel" aria-labelledby="permissions-title">
        <h2 id="permissions-title">{t("roles.permissions")}</h2>
        <ListTable
          rows={permissions}
          rowKey={(p) => p.id}
          empty={t("empty.permissions")}
          columns={[
            { header: t("common.name"), cell: (p) => <code>{p.name}</code> },
            { header: t("apps.description"), cell: (p) => p.description ?? "" },
            {
              header: t("common.actions"),
              cell: (p) => (
                <ActionMenu name={p.name}>
                  <ConfirmAction
                    intent="deletePermission"
                    label={t("roleDetail.deletePermission", { permission: p.name })}
                    question={t("roleDetail.confirmDeletePermission", { permission: p.name })}
                    fields={{ permissionId: p.id }}
                    danger
                  />
                </ActionMenu>
              ),
            },
          ]}
        />
      </section>
      <div className="grid">
        <Form method="post" reloadDocument noValidate onSubmit={onRoleSubmit} className="panel form" aria-labelledby="new-role-title">
          <h2 id="new-role-title">{t("roles.newRole")}</h2>
          {errors.form ? <Notice kind="error">{errors.form}</Notice> : null}
          <Csrf />
          <input type="hidden" name="intent" value="createRole" />
          <TextField name="name" label={t("common.name")} error={errors.name} required />
          <TextField name="description" label={t("apps.description")} error={errors.description} />
          {permissions.length > 0 ? (
            <CheckboxGroup name="permissionIds" legend={t("roles.permissions")} options={permissions.map((p) => ({ value: p.id, label: p.name }))} checked={[]} error={errors.permissionIds} />
          ) : null}
          <button type="submit" className="button button-inline">{t("roles.createRole")}</button>
        </Form>
        <Form method="post" reloadDocument noValidate onSubmit={onPermissionSubmit} className="panel form" aria-labelledby="new-permission-title">
          <h2 id="new-permission-title">{t("roles.newPermission")}</h2>
          {errors.permissionForm ? <Notice kind="error">{errors.permissionForm}</Notice> : null}
          <Csrf />
          <input type="hidden" name="intent" value="createPermission" />
          <TextField name="permissionName" label={t("common.name")} error={errors.permissionName} required />
          <TextField name="permissionDescription" label={t("apps.description")} error={errors.permissionDescription} />
          <button type="submit" className="button button-inline">{t("roles.createPermission")}</button>
        </Form>
      </div>
    </>
  );
}
