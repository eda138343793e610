import { data, redirect, type ActionFunctionArgs, type LoaderFunctionArgs, type MetaFunction } from "@remix-run/node";
import { Form, Link, useActionData, useLoaderData } from "@remix-run/react";
import { useTranslation } from "react-i18next";
import { consoleHeaders, NO_STORE } from "~/.server/console/page";
import { requireOrganizationConsole, requireOrganizationConsoleForm } from "~/.server/console/organization-console";
import { isUuid } from "~/schemas/uuid";

export const headers = consoleHeaders;
export const meta: MetaFunction = () => [{ title: "User · Porta" }];

/**
 * One user of the organization: status, roles of the organization (grant, remove), and the
 * administrator's actions (deactivate, activate, reset the second factor, end every session).
 * A user of another organization is not found: the door answers for its own organization only.
 */
export async function loader(args: LoaderFunctionArgs) {
  const console = await requireOrganizationConsole(args);
  const userId = args.params.userId ?? "";
  if (!isUuid(userId)) throw data({ message: "not_found" }, { status: 404, headers: NO_STORE });
  const [user, roles, allRoles] = await Promise.all([
    console.admin("usersById.get", { params: { id: userId } }),
    console.admin("userRoles.list", { params: { id: userId } }),
    console.admin("roles.list", { query: { organizationId: console.organizationId, limit: "100" } }),
  ]);
  if (!user.ok) throw data({ message: user.error.code }, { status: user.status, headers: NO_STORE });
  const held = roles.ok ? roles.body.data : [];
  return data(
    {
      slug: console.slug,
      csrf: console.csrf,
      user: { id: user.body.id, email: user.body.email, givenName: user.body.givenName, familyName: user.body.familyName, status: user.body.status },
      roles: held.map((r) => ({ id: r.id, name: r.name })),
      grantable: allRoles.ok ? allRoles.body.data.filter((r) => !held.some((h) => h.id === r.id)).map((r) => ({ id: r.id, name: r.name })) : [],
      done: new URL(args.request.url).searchParams.get("done"),
    },
    { headers: NO_STORE },
  );
}

type Intent = "deactivate" | "activate" | "resetTwoFactor" | "revokeSessions" | "grantRole" | "removeRole";

export async function action(args: ActionFunctionArgs) {
  const { console, form } = await requireOrganizationConsoleForm(args);
  const userId = args.params.userId ?? "";
  if (!isUuid(userId)) throw data({ message: "not_found" }, { status: 404, headers: NO_STORE });
  const intent = String(form.get("intent") ?? "") as Intent;
  const roleId = String(form.get("roleId") ?? "");
  const params = { id: userId };
  const result =
    intent === "deactivate"
      ? await console.admin("usersById.deactivate", { params })
      : intent === "activate"
        ? await console.admin("usersById.activate", { params })
        : intent === "resetTwoFactor"
          ? await console.admin("twoFactor.reset", { params, body: {} })
          : intent === "revokeSessions"
            ? await console.admin("sessions.revokeForUser", { params })
            : intent === "grantRole" && isUuid(roleId)
              ? await console.admin("userRoles.assign", { params: { id: userId, roleId } })
              : intent === "removeRole" && isUuid(roleId)
                ? await console.admin("userRoles.remove", { params: { id: userId, roleId } })
                : null;
  if (!result) return data({ message: "invalid" }, { status: 422, headers: NO_STORE });
  if (!result.ok) return data({ message: result.error.message }, { status: result.status, headers: NO_STORE });
  return redirect(`/${console.slug}/console/users/${userId}?done=${intent}`, { headers: NO_STORE });
}

function ActionButton({ csrf, intent, label, roleId }: { csrf: string; intent: Intent; label: string; roleId?: string }) {
  return (
    <Form method="post" className="inline-form">
      <input type="hidden" name="csrf" value={csrf} />
      <input type="hidden" name="intent" value={intent} />
      {roleId ? <input type="hidden" name="roleId" value={roleId} /> : null}
      <button type="submit" className="button button-inline button-secondary">
        {label}
      </button>
    </Form>
  );
}

export default function OrganizationUser() {
  const { slug, csrf, user, roles, grantable, done } = useLoaderData<typeof loader>();
  const failed = useActionData<typeof action>();
  const { t } = useTranslation("console");
  return (
    <>
      <p className="breadcrumb">
        <Link to={`/${slug}/console`}>{t("organizationConsole.users")}</Link>
      </p>
      <h1>{user.email}</h1>
      {done ? <p role="status">{t("organizationConsole.done")}</p> : null}
      {failed ? <p role="alert">{failed.message}</p> : null}
      <p>
        {[user.givenName, user.familyName].filter(Boolean).join(" ")} · {t(`organizationConsole.statuses.${user.status}`)}
      </p>
      <div className="actions">
        {user.status === "active" ? (
          <ActionButton csrf={csrf} intent="deactivate" label={t("organizationConsole.deactivate")} />
        ) : (
          <ActionButton csrf={csrf} intent="activate" label={t("organizationConsole.activate")} />
        )}
        <ActionButton csrf={csrf} intent="resetTwoFactor" label={t("organizationConsole.resetTwoFactor")} />
        <ActionButton csrf={csrf} intent="revokeSessions" label={t("organizationConsole.revokeSessions")} />
      </div>
      <h2>{t("organizationConsole.roles")}</h2>
      <ul>
        {roles.map((role) => (
          <li key={role.id}>
            {role.name} <ActionButton csrf={csrf} intent="removeRole" roleId={role.id} label={t("organizationConsole.removeRole")} />
          </li>
        ))}
      </ul>
      {grantable.length > 0 ? (
        <Form method="post">
          <input type="hidden" name="csrf" value={csrf} />
          <input type="hidden" name="intent" value="grantRole" />
          <label htmlFor="roleId">{t("organizationConsole.grantRole")}</label>
          <select id="roleId" name="roleId">
            {grantable.map((role) => (
              <option key={role.id} value={role.id}>
                {role.name}
              </option>
            ))}
          </select>
          <button type="submit" className="button button-inline">
            {t("organizationConsole.grant")}
          </button>
        </Form>
      ) : null}
    </>
  );
}
