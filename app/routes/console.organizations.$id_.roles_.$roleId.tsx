import { data, redirect, type ActionFunctionArgs, type LoaderFunctionArgs, type MetaFunction } from "@remix-run/node";
import { Link, useActionData, useLoaderData } from "@remix-run/react";
import { useTranslation } from "react-i18next";
import { consoleHeaders, NO_STORE, requireConsole, requireConsoleForm, type Console } from "~/.server/console/page";
import { detailErrors, zodFieldErrors } from "~/components/console/forms";
import { RoleConflictView, RoleEditForm, type RoleEditValues } from "~/components/console/role-detail";
import { ActionForm, ConfirmAction, Notice, SelectField } from "~/components/console/ui";
import { changedFields, conflictErrors, formVersion, ROLE_FIELDS, roleUpdateInput } from "~/components/console/user-forms";
import { RoleUpdateSchema, type Role } from "~/schemas/rbac";

export const headers = consoleHeaders;
export const meta: MetaFunction = () => [{ title: "Role · Porta console" }];

const notFound = () => data({ message: "not_found" }, { status: 404, headers: NO_STORE });

export async function loader(args: LoaderFunctionArgs) {
  const console = await requireConsole(args);
  const orgId = args.params.id!;
  const [org, role, permissions] = await Promise.all([
    console.admin("organizations.get", { params: { id: orgId } }),
    console.admin("roles.get", { params: { id: args.params.roleId! } }),
    console.admin("permissions.list", { query: { organizationId: orgId, limit: "100" } }),
  ]);
  if (!org.ok) throw data({ message: org.error.code }, { status: org.status === 422 ? 404 : org.status });
  // A role of another organization is not found here (the address names this organization).
  if (!role.ok || role.body.organizationId !== orgId) throw notFound();
  return data(
    { org: org.body, role: role.body, version: role.version!, permissions: permissions.ok ? permissions.body.data : [], done: new URL(args.request.url).searchParams.get("done") },
    { headers: NO_STORE },
  );
}

type Edit = { kind: "invalid"; values: RoleEditValues; errors: Record<string, string> } | { kind: "conflict"; values: RoleEditValues; current: Role };
interface ActionResult {
  message: string | null;
  edit: Edit | null;
}
const answer = (result: Partial<ActionResult>, status: number) => data<ActionResult>({ message: null, edit: null, ...result }, { status, headers: NO_STORE });

async function updateRole(console: Console, saved: { body: Role; version: number | undefined }, form: FormData) {
  const roleId = saved.body.id;
  const values = roleUpdateInput(form);
  const parsed = RoleUpdateSchema.safeParse(values);
  if (!parsed.success) return { ok: false as const, response: answer({ edit: { kind: "invalid", values, errors: zodFieldErrors(parsed.error) } }, 422) };
  const version = formVersion(form);
  // A page older than the saved role (or a form without its version) never overwrites.
  if (saved.version !== version) return { ok: false as const, response: answer({ edit: { kind: "conflict", values, current: saved.body } }, 409) };
  const body = changedFields(parsed.data, saved.body);
  if (Object.keys(body).length === 0) return { ok: true as const };
  // If-Match still guards the moment between that read and this write.
  const result = await console.admin("roles.update", { params: { id: roleId }, body, ifMatch: version });
  if (result.ok) return { ok: true as const };
  if (result.status === 409 && result.error.code === "etag_mismatch") {
    const current = await console.admin("roles.get", { params: { id: roleId } });
    if (current.ok) return { ok: false as const, response: answer({ edit: { kind: "conflict", values, current: current.body } }, 409) };
  }
  const errors = result.status === 409 ? conflictErrors(result.error, ROLE_FIELDS) : result.error.details ? detailErrors(result.error.details, ROLE_FIELDS) : { form: result.error.message };
  return { ok: false as const, response: answer({ edit: { kind: "invalid", values, errors } }, result.status) };
}

export async function action(args: ActionFunctionArgs) {
  const { console, form } = await requireConsoleForm(args);
  const orgId = args.params.id!;
  const roleId = args.params.roleId!;
  const role = await console.admin("roles.get", { params: { id: roleId } });
  if (!role.ok || role.body.organizationId !== orgId) throw notFound();
  const intent = String(form.get("intent"));
  const back = (done: string) => redirect(`/console/organizations/${orgId}/roles/${roleId}?done=${done}`);
  if (intent === "update") {
    const updated = await updateRole(console, role, form);
    return updated.ok ? back("updated") : updated.response;
  }
  if (intent !== "assignPermission" && intent !== "removePermission") return answer({ message: "unknown action" }, 400);
  const params = { id: roleId, permissionId: String(form.get("permissionId") ?? "") };
  const result = await console.admin(`roles.${intent}`, { params });
  if (!result.ok) return answer({ message: result.error.details?.map((d) => `${d.field}: ${d.message}`).join("; ") || result.error.message }, result.status);
  return back(intent);
}

export default function RolePage() {
  const { org, role, version, permissions, done } = useLoaderData<typeof loader>();
  const result = useActionData<typeof action>();
  const { t } = useTranslation("console");
  const held = new Set(role.permissions.map((p) => p.id));
  const assignable = permissions.filter((p) => !held.has(p.id));
  return (
    <>
      <p className="breadcrumb">
        <Link to={`/console/organizations/${org.id}`}>{org.name}</Link> / <Link to={`/console/organizations/${org.id}/roles`}>{t("roles.title")}</Link>
      </p>
      <h1>{t("roleDetail.title", { name: role.name })}</h1>
      {role.description ? <p className="muted">{role.description}</p> : null}
      {done ? <Notice kind="info">{t(`roleDetail.done.${done}`)}</Notice> : null}
      {result?.message ? <Notice kind="error">{result.message}</Notice> : null}
      {result?.edit?.kind === "conflict" ? (
        <RoleConflictView current={result.edit.current} values={result.edit.values} />
      ) : (
        <RoleEditForm role={role} version={version} values={result?.edit?.values ?? null} errors={result?.edit?.kind === "invalid" ? result.edit.errors : {}} />
      )}
      <section className="panel" aria-labelledby="role-permissions-title">
        <h2 id="role-permissions-title">{t("roles.permissions")}</h2>
        {role.permissions.length === 0 ? (
          <p>{t("roleDetail.noPermissions")}</p>
        ) : (
          <ul className="plain item-actions">
            {role.permissions.map((p) => (
              <li key={p.id}>
                <code>{p.name}</code>{" "}
                <ConfirmAction
                  intent="removePermission"
                  label={t("roleDetail.remove", { permission: p.name })}
                  question={t("roleDetail.confirmRemove", { permission: p.name, role: role.name })}
                  fields={{ permissionId: p.id }}
                />
              </li>
            ))}
          </ul>
        )}
        {assignable.length > 0 ? (
          <ActionForm intent="assignPermission" className="inline-form">
            <SelectField name="permissionId" label={t("roleDetail.permissionToAssign")} options={assignable.map((p) => ({ value: p.id, label: p.name }))} defaultValue={assignable[0]!.id} />
            <button type="submit" className="button button-inline">{t("roleDetail.assign")}</button>
          </ActionForm>
        ) : (
          <p className="hint">{permissions.length === 0 ? t("roleDetail.noOrgPermissions") : t("roleDetail.allAssigned")}</p>
        )}
      </section>
    </>
  );
}
