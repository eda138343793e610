import { data, type LoaderFunctionArgs, type MetaFunction } from "@remix-run/node";
import { Form, Link, useLoaderData } from "@remix-run/react";
import { useTranslation } from "react-i18next";
import { consoleHeaders, NO_STORE } from "~/.server/console/page";
import { requireOrganizationConsole } from "~/.server/console/organization-console";

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
  return data({ slug: console.slug, email: console.session.email, org: { name: org.body.name }, q, users: users.ok ? users.body.data : [], error: users.ok ? null : users.error.message }, { headers: NO_STORE });
}

export default function OrganizationUsers() {
  const { slug, email, org, q, users, error } = useLoaderData<typeof loader>();
  const { t } = useTranslation("console");
  return (
    <>
      <p className="breadcrumb">
        {org.name} · {t("organizationConsole.signedInAs", { email })} · <Link to={`/${slug}/console/audit`}>{t("organizationConsole.audit")}</Link>
      </p>
      <h1>{t("organizationConsole.users")}</h1>
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
