import { data, redirect, type ActionFunctionArgs, type LoaderFunctionArgs, type MetaFunction } from "@remix-run/node";
import { Form, Link, useActionData, useLoaderData, useLocation } from "@remix-run/react";
import { useState, type FormEvent } from "react";
import { useTranslation } from "react-i18next";
import { consoleHeaders, NO_STORE, requireConsole, requireConsoleForm } from "~/.server/console/page";
import { ListTable } from "~/components/console/list-table";
import { detailErrors, list, text, zodFieldErrors } from "~/components/console/forms";
import { SecretOnce } from "~/components/console/secret-once";
import { ActionMenu, CheckboxGroup, ConfirmAction, Csrf, CursorPager, Notice, SelectField, TextField } from "~/components/console/ui";
import { ClientCreateSchema } from "~/schemas/client";
import { LOGIN_METHODS } from "~/schemas/login-methods";

export const headers = consoleHeaders;
export const meta: MetaFunction = () => [{ title: "Clients · Porta console" }];

export async function loader(args: LoaderFunctionArgs) {
  const console = await requireConsole(args);
  const orgId = args.params.id!;
  const search = new URL(args.request.url).searchParams;
  const cursor = search.get("cursor") ?? undefined;
  const [org, clients, apps] = await Promise.all([
    console.admin("organizations.get", { params: { id: orgId } }),
    console.admin("clients.list", { query: { organizationId: orgId, cursor, limit: "20" } }),
    console.admin("applications.list", { query: { organizationId: orgId, limit: "100", sort: "name" } }),
  ]);
  if (!org.ok) throw data({ message: org.error.code }, { status: org.status === 422 ? 404 : org.status });
  const applications = apps.ok ? apps.body.data.map((a) => ({ id: a.id, name: a.name })) : [];
  // Coming from an application's page, the new client belongs to it unless the form says otherwise.
  const from = search.get("applicationId");
  const fromApplication = applications.some((a) => a.id === from) ? from : null;
  return data(
    { org: org.body, page: clients.ok ? clients.body : null, error: clients.ok ? null : clients.error.message, done: search.get("done"), applications, fromApplication },
    { headers: NO_STORE },
  );
}

/** The form as the Admin API's create body; "inherit" sends no login methods (the organization's default applies). */
function createInput(form: FormData, organizationId: string) {
  const redirectUris = (text(form, "redirectUris") ?? "").split(/\r?\n/).map((l) => l.trim()).filter(Boolean);
  const applicationId = text(form, "applicationId") ?? "";
  return {
    organizationId,
    // "" is the "no application" choice.
    applicationId: applicationId === "" ? null : applicationId,
    name: text(form, "name") ?? "",
    clientType: text(form, "clientType"),
    redirectUris,
    ...(text(form, "loginMode") === "override" ? { loginMethods: list(form, "loginMethods") } : {}),
  };
}

type ActionResult =
  | { kind: "invalid"; values: { name: string; applicationId: string | null; clientType?: string | undefined; redirectUris: string[] }; errors: Record<string, string> }
  | { kind: "created"; client: { id: string; name: string }; secret: string | null }
  | { kind: "rowFailed"; message: string };

/** Row actions: the Admin API operation each runs on the client named in the form. */
const ROW_INTENTS: Record<string, "clients.deactivate" | "clients.activate" | "clients.clearLoginMethods"> = { deactivate: "clients.deactivate", activate: "clients.activate", inherit: "clients.clearLoginMethods" };

export async function action(args: ActionFunctionArgs) {
  const { console, form } = await requireConsoleForm(args);
  const rowOperation = ROW_INTENTS[String(form.get("intent"))];
  if (rowOperation) {
    const result = await console.admin(rowOperation, { params: { id: String(form.get("clientId") ?? "") } });
    if (!result.ok) return data<ActionResult>({ kind: "rowFailed", message: result.error.message }, { status: result.status, headers: NO_STORE });
    return redirect(`/console/organizations/${args.params.id!}/clients?done=${String(form.get("intent"))}`);
  }
  const input = createInput(form, args.params.id!);
  const parsed = ClientCreateSchema.safeParse(input);
  if (!parsed.success) return data<ActionResult>({ kind: "invalid", values: input, errors: zodFieldErrors(parsed.error) }, { status: 422, headers: NO_STORE });
  const created = await console.admin("clients.create", { body: parsed.data });
  if (!created.ok) {
    const errors = created.error.details ? detailErrors(created.error.details, ["name", "applicationId", "clientType", "redirectUris", "loginMethods"]) : { form: created.error.message };
    return data<ActionResult>({ kind: "invalid", values: input, errors }, { status: created.status, headers: NO_STORE });
  }
  // The secret is in this one response only; the page that shows it is never cached.
  return data<ActionResult>({ kind: "created", client: { id: created.body.id, name: created.body.name }, secret: created.body.secret?.value ?? null }, { headers: NO_STORE });
}

export default function Clients() {
  const { org, page, error, done, applications, fromApplication } = useLoaderData<typeof loader>();
  const result = useActionData<typeof action>();
  const { search } = useLocation();
  const { t } = useTranslation("console");
  const [clientErrors, setClientErrors] = useState<Record<string, string> | null>(null);
  const errors = clientErrors ?? (result?.kind === "invalid" ? result.errors : {});
  const values = result?.kind === "invalid" ? result.values : undefined;
  const methods = (m: readonly string[]) => m.map((x) => t(`orgs.method.${x}`)).join(", ");

  function onSubmit(event: FormEvent<HTMLFormElement>) {
    const parsed = ClientCreateSchema.safeParse(createInput(new FormData(event.currentTarget), org.id));
    if (parsed.success) return setClientErrors(null);
    event.preventDefault();
    setClientErrors(zodFieldErrors(parsed.error));
  }

  return (
    <>
      <p className="breadcrumb"><Link to={`/console/organizations/${org.id}`}>{org.name}</Link></p>
      <h1>{t("clients.title")}</h1>
      <p className="muted">{t("apps.explain")}</p>
      {result?.kind === "created" ? (
        <>
          <Notice kind="info">
            {t("clients.created", { name: result.client.name })} {t("clients.id")}: <code>{result.client.id}</code>{" "}
            <Link to={`/console/organizations/${org.id}/clients/${encodeURIComponent(result.client.id)}`}>{t("clients.open", { name: result.client.name })}</Link>
          </Notice>
          {result.secret ? <SecretOnce secret={result.secret} /> : null}
        </>
      ) : null}
      {done ? <Notice kind="info">{done === "deleted" ? t("clientDetail.deleted") : t(`clients.done.${done}`)}</Notice> : null}
      {error ? <Notice kind="error">{error}</Notice> : null}
      {result?.kind === "rowFailed" ? <Notice kind="error">{result.message}</Notice> : null}
      {page ? (
        <>
          <ListTable
            rows={page.data}
            rowKey={(c) => c.id}
            empty={t("empty.clients")}
            columns={[
              { header: t("common.name"), cell: (c) => <Link to={`/console/organizations/${org.id}/clients/${c.id}`}>{c.name}</Link> },
              { header: t("clients.id"), cell: (c) => <code>{c.id}</code> },
              {
                header: t("clients.type"),
                cell: (c) => (
                  <>
                    {c.clientType}
                    {c.dynamicallyRegistered ? <span className="muted"> ({t("clients.dynamicallyRegistered")})</span> : null}
                  </>
                ),
              },
              {
                header: t("clients.application"),
                cell: (c) => {
                  const app = applications.find((a) => a.id === c.applicationId);
                  return app ? <Link to={`/console/organizations/${org.id}/applications/${app.id}`}>{app.name}</Link> : "";
                },
              },
              {
                header: t("clients.loginMethods"),
                cell: (c) => (c.loginMethods === null ? t("clients.inherit", { methods: methods(c.effectiveLoginMethods) }) : t("clients.override", { methods: methods(c.loginMethods) })),
              },
              { header: t("common.status"), cell: (c) => t(`users.status.${c.status}`) },
              {
                header: t("common.actions"),
                cell: (c) => (
                  <ActionMenu name={c.name}>
                    {c.status === "active" ? (
                      <ConfirmAction intent="deactivate" label={t("clientDetail.deactivate")} question={t("clients.confirmRevoke", { name: c.name })} fields={{ clientId: c.id }} />
                    ) : (
                      <ConfirmAction intent="activate" label={t("users.activate")} question={t("clients.confirmActivate", { name: c.name })} fields={{ clientId: c.id }} />
                    )}
                    {c.loginMethods !== null ? (
                      <ConfirmAction intent="inherit" label={t("clients.useDefault")} question={t("clients.confirmInherit", { name: c.name, methods: methods(org.defaultLoginMethods) })} fields={{ clientId: c.id }} />
                    ) : null}
                  </ActionMenu>
                ),
              },
            ]}
          />
          <CursorPager search={search} cursor={page.cursor} />
        </>
      ) : null}

      <Form method="post" reloadDocument noValidate onSubmit={onSubmit} className="panel form" aria-labelledby="new-client-title">
        <h2 id="new-client-title">{t("clients.new")}</h2>
        {errors.form ? <Notice kind="error">{errors.form}</Notice> : null}
        <Csrf />
        <TextField name="name" label={t("clients.name")} defaultValue={values?.name} error={errors.name} required />
        <SelectField
          name="applicationId"
          label={t("clients.application")}
          options={[{ value: "", label: t("clientDetail.noApplication") }, ...applications.map((a) => ({ value: a.id, label: a.name }))]}
          defaultValue={(values ? values.applicationId : fromApplication) ?? ""}
          error={errors.applicationId}
          hint={t("clients.applicationHint")}
        />
        <SelectField
          name="clientType"
          label={t("clients.type")}
          options={(["confidential", "public"] as const).map((v) => ({ value: v, label: t(`clients.types.${v}`) }))}
          defaultValue={values?.clientType ?? "confidential"}
          error={errors.clientType}
        />
        <div className="field">
          <label htmlFor="redirectUris">{t("clients.redirectUris")}</label>
          <textarea
            id="redirectUris"
            name="redirectUris"
            rows={3}
            defaultValue={values?.redirectUris.join("\n")}
            aria-describedby={errors.redirectUris ? "redirectUris-hint redirectUris-error" : "redirectUris-hint"}
            aria-invalid={errors.redirectUris ? true : undefined}
          />
          <p id="redirectUris-hint" className="hint">{t("clients.redirectHint")}</p>
          {errors.redirectUris ? <p id="redirectUris-error" className="field-error" role="alert">{errors.redirectUris}</p> : null}
        </div>
        <SelectField
          name="loginMode"
          label={t("clients.loginMethods")}
          options={[
            { value: "inherit", label: t("clients.inherit", { methods: methods(org.defaultLoginMethods) }) },
            { value: "override", label: t("clients.override", { methods: "…" }) },
          ]}
          defaultValue="inherit"
        />
        <CheckboxGroup
          name="loginMethods"
          legend={t("clients.overrideMethods")}
          options={LOGIN_METHODS.map((m) => ({ value: m, label: t(`orgs.method.${m}`) }))}
          checked={org.defaultLoginMethods}
          error={errors.loginMethods}
        />
        <button type="submit" className="button button-inline">{t("clients.create")}</button>
      </Form>
    </>
  );
}
