import { data, redirect, type ActionFunctionArgs, type LoaderFunctionArgs, type MetaFunction } from "@remix-run/node";
import { Form, Link, useActionData, useLoaderData } from "@remix-run/react";
import { useTranslation } from "react-i18next";
import { consoleHeaders, NO_STORE } from "~/.server/console/page";
import { requireOrganizationConsole, requireOrganizationConsoleForm } from "~/.server/console/organization-console";
import { Csrf, Notice, TextField } from "~/components/console/ui";

export const headers = consoleHeaders;
export const meta: MetaFunction = () => [{ title: "Users · Porta" }];

/** An organization console's start: the organization's users (its door lists no one else). */
export async function loader(args: LoaderFunctionArgs) {
  const console = await requireOrganizationConsole(args);
  const search = new URL(args.request.url).searchParams;
  const q = search.get("q") ?? "";
  const [org, users] = await Promise.all([
    console.admin("organizations.get", { params: { id: console.organizationId } }),
    console.admin("users.list", { params: { orgId: console.organizationId }, query: { q: q.trim() || undefined, cursor: search.get("cursor") ?? undefined, limit: "50" } }),
  ]);
  if (!org.ok) throw data({ message: org.error.code }, { status: org.status });
  return data({ slug: console.slug, q, users: users.ok ? users.body.data : [], error: users.ok ? null : users.error.message, invited: search.get("invited") }, { headers: NO_STORE });
}

/** Invites a person to the organization, with org-admin when asked (granted on acceptance). */
export async function action(args: ActionFunctionArgs) {
  const { console, form } = await requireOrganizationConsoleForm(args);
  const email = String(form.get("email") ?? "").trim();
  const roles = form.get("orgAdmin") === "yes" ? ["org-admin"] : undefined;
  const invited = await console.admin("users.invite", { params: { orgId: console.organizationId }, body: { email, ...(roles ? { roles } : {}) } });
  if (!invited.ok) {
    const errors = invited.error.details?.length ? Object.fromEntries(invited.error.details.map((d) => [d.field, d.message])) : { form: invited.error.message };
    return data({ errors, email }, { status: invited.status, headers: NO_STORE });
  }
  return redirect(`/${console.slug}/console?invited=${encodeURIComponent(email)}`, { headers: NO_STORE });
}

export default function OrganizationUsers() {
  const { slug, q, users, error, invited } = useLoaderData<typeof loader>();
  const refused = useActionData<typeof action>();
  const { t } = useTranslation("console");
  return (
    <>
      <h1>{t("organizationConsole.users")}</h1>
      {invited ? <Notice kind="info">{t("organizationConsole.invited", { email: invited })}</Notice> : null}
      {refused?.errors.form ? <Notice kind="error">{refused.errors.form}</Notice> : null}
      <Form method="post" className="panel form" aria-labelledby="invite-title">
        <h2 id="invite-title">{t("organizationConsole.invite")}</h2>
        <Csrf />
        <TextField name="email" label={t("organizationConsole.email")} defaultValue={refused?.email ?? ""} error={refused?.errors.email} />
        <label className="check">
          <input type="checkbox" name="orgAdmin" value="yes" /> {t("organizationConsole.inviteAsAdmin")}
        </label>
        <button type="submit" className="button button-inline">{t("organizationConsole.invite")}</button>
      </Form>
      <Form method="get" className="search" role="search">
        <label htmlFor="q">{t("users.searchLabel")}</label>
        <input id="q" name="q" type="search" defaultValue={q} />
        <button type="submit" className="button button-inline button-secondary">{t("common.search")}</button>
      </Form>
      {error ? <p role="alert">{error}</p> : null}
      <table>
        <thead>
          <tr>
            <th scope="col">{t("organizationConsole.email")}</th>
            <th scope="col">{t("organizationConsole.name")}</th>
            <th scope="col">{t("organizationConsole.status")}</th>
          </tr>
        </thead>
        <tbody>
          {users.map((user) => (
            <tr key={user.id} data-testid="org-user">
              <td>
                <Link to={`/${slug}/console/users/${user.id}`}>{user.email}</Link>
              </td>
              <td>{[user.givenName, user.familyName].filter(Boolean).join(" ")}</td>
              <td>{t(`organizationConsole.statuses.${user.status}`)}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </>
  );
}
