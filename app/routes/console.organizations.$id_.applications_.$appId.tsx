import { data, redirect, type ActionFunctionArgs, type LoaderFunctionArgs, type MetaFunction } from "@remix-run/node";
import { Form, Link, useActionData, useLoaderData } from "@remix-run/react";
import { useState, type FormEvent } from "react";
import { useTranslation } from "react-i18next";
import type { Page } from "~/.server/admin/http/pagination";
import { consoleHeaders, NO_STORE, requireConsole, requireConsoleForm } from "~/.server/console/page";
import { detailErrors, text, zodFieldErrors } from "~/components/console/forms";
import { Csrf, Notice, SelectField, TextField } from "~/components/console/ui";
import type { Application } from "~/schemas/application";
import { CLAIM_TYPE_VALUES, CustomClaimCreateSchema, type CustomClaim } from "~/schemas/claim";

export const headers = consoleHeaders;
export const meta: MetaFunction = () => [{ title: "Application · Porta console" }];

export async function loader(args: LoaderFunctionArgs) {
  const console = await requireConsole(args);
  const appId = args.params.appId!;
  const [app, claims] = await Promise.all([
    console.admin<Application>("applications.get", { params: { id: appId } }),
    console.admin<Page<CustomClaim>>("customClaims.list", { params: { appId }, query: { limit: "100" } }),
  ]);
  if (!app.ok || app.body.organizationId !== args.params.id) throw data({ message: "not_found" }, { status: 404 });
  return data({ app: app.body, claims: claims.ok ? claims.body.data : [], done: new URL(args.request.url).searchParams.get("done") }, { headers: NO_STORE });
}

function claimInput(form: FormData) {
  const description = text(form, "description")?.trim();
  return { claimName: text(form, "claimName") ?? "", claimType: text(form, "claimType"), scope: text(form, "scope") ?? "", ...(description ? { description } : {}) };
}

const SHOWN = ["claimName", "claimType", "scope", "description"];

export async function action(args: ActionFunctionArgs) {
  const { console, form } = await requireConsoleForm(args);
  const input = claimInput(form);
  const parsed = CustomClaimCreateSchema.safeParse(input);
  if (!parsed.success) return data({ values: input, errors: zodFieldErrors(parsed.error) }, { status: 422, headers: NO_STORE });
  const created = await console.admin("customClaims.create", { params: { appId: args.params.appId! }, body: parsed.data });
  if (!created.ok) {
    const errors = created.error.details ? detailErrors(created.error.details, SHOWN) : { form: created.error.message };
    return data({ values: input, errors }, { status: created.status, headers: NO_STORE });
  }
  return redirect(`/console/organizations/${args.params.id!}/applications/${args.params.appId!}?done=claim`);
}

export default function ApplicationPage() {
  const { app, claims, done } = useLoaderData<typeof loader>();
  const result = useActionData<typeof action>();
  const { t } = useTranslation("console");
  const [clientErrors, setClientErrors] = useState<Record<string, string> | null>(null);
  const errors: Record<string, string> = clientErrors ?? result?.errors ?? {};
  const values = result?.values;

  function onSubmit(event: FormEvent<HTMLFormElement>) {
    const parsed = CustomClaimCreateSchema.safeParse(claimInput(new FormData(event.currentTarget)));
    if (parsed.success) return setClientErrors(null);
    event.preventDefault();
    setClientErrors(zodFieldErrors(parsed.error));
  }

  return (
    <>
      <p className="breadcrumb"><Link to={`/console/organizations/${app.organizationId}/applications`}>{t("apps.title")}</Link></p>
      <h1>{app.name}</h1>
      {app.description ? <p className="muted">{app.description}</p> : null}
      {done === "claim" ? <Notice kind="info">{t("claims.created")}</Notice> : null}
      <h2>{t("claims.title")}</h2>
      {claims.length === 0 ? (
        <p>{t("common.none")}</p>
      ) : (
        <div className="table-wrap">
          <table className="list">
            <thead>
              <tr>
                <th scope="col">{t("claims.claimName")}</th>
                <th scope="col">{t("claims.claimType")}</th>
                <th scope="col">{t("claims.scope")}</th>
                <th scope="col">{t("apps.description")}</th>
              </tr>
            </thead>
            <tbody>
              {claims.map((c) => (
                <tr key={c.id}>
                  <td><code>{c.claimName}</code></td>
                  <td>{c.claimType}</td>
                  <td><code>{c.scope}</code></td>
                  <td>{c.description ?? ""}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      <Form method="post" reloadDocument noValidate onSubmit={onSubmit} className="panel form" aria-labelledby="new-claim-title">
        <h2 id="new-claim-title">{t("claims.new")}</h2>
        {errors.form ? <Notice kind="error">{errors.form}</Notice> : null}
        <Csrf />
        <TextField name="claimName" label={t("claims.claimName")} defaultValue={values?.claimName} error={errors.claimName} required />
        <SelectField name="claimType" label={t("claims.claimType")} options={CLAIM_TYPE_VALUES.map((v) => ({ value: v, label: v }))} defaultValue={values?.claimType ?? "string"} error={errors.claimType} />
        <TextField name="scope" label={t("claims.scope")} defaultValue={values?.scope} error={errors.scope} hint={t("claims.scopeHint")} required />
        <TextField name="description" label={t("apps.description")} defaultValue={values?.description} error={errors.description} />
        <button type="submit" className="button button-inline">{t("claims.create")}</button>
      </Form>
    </>
  );
}
