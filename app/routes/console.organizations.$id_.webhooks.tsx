import { data, redirect, type ActionFunctionArgs, type LoaderFunctionArgs, type MetaFunction } from "@remix-run/node";
import { Form, Link, useActionData, useLoaderData } from "@remix-run/react";
import { useTranslation } from "react-i18next";
import { consoleHeaders, NO_STORE, requireConsole, requireConsoleForm } from "~/.server/console/page";
import { detailErrors, list, text, zodFieldErrors } from "~/components/console/forms";
import { ListTable } from "~/components/console/list-table";
import { ActionMenu, CheckboxGroup, ConfirmAction, CopyButton, Csrf, Notice, TextField } from "~/components/console/ui";
import { AUDIT_EVENT_FAMILIES } from "~/schemas/audit-events";
import { WebhookEndpointCreateSchema } from "~/schemas/webhook";

export const headers = consoleHeaders;
export const meta: MetaFunction = () => [{ title: "Webhooks · Porta console" }];

/** An organization's webhook endpoints (decision 047): add one, turn it on or off, rotate its secret, delete it. */
export async function loader(args: LoaderFunctionArgs) {
  const console = await requireConsole(args);
  const orgId = args.params.id!;
  const [org, endpoints] = await Promise.all([
    console.admin("organizations.get", { params: { id: orgId } }),
    console.admin("webhooks.list", { params: { orgId }, query: { limit: "100" } }),
  ]);
  if (!org.ok) throw data({ message: org.error.code }, { status: org.status === 422 ? 404 : org.status });
  const done = new URL(args.request.url).searchParams.get("done");
  return data({ org: org.body, endpoints: endpoints.ok ? endpoints.body.data : [], error: endpoints.ok ? null : endpoints.error.message, done }, { headers: NO_STORE });
}

/** The form as the create body: families ticked, plus exact event types typed (space or comma separated). */
function createInput(form: FormData) {
  const exact = (text(form, "exactEventTypes") ?? "").split(/[\s,]+/).filter(Boolean);
  const description = text(form, "description") ?? "";
  return { url: text(form, "url") ?? "", eventTypes: [...list(form, "eventFamilies"), ...exact], ...(description ? { description } : {}) };
}

type ActionResult =
  | { kind: "invalid"; values: { url: string; eventTypes: string[]; description?: string }; errors: Record<string, string> }
  | { kind: "secret"; url: string; secret: string; rotated: boolean }
  | { kind: "rowFailed"; message: string };

export async function action(args: ActionFunctionArgs) {
  const { console, form } = await requireConsoleForm(args);
  const orgId = args.params.id!;
  const intent = String(form.get("intent") ?? "create");
  const id = String(form.get("endpointId") ?? "");
  if (intent === "enable" || intent === "disable") {
    const result = await console.admin("webhooks.update", { params: { orgId, id }, body: { enabled: intent === "enable" } });
    if (!result.ok) return data<ActionResult>({ kind: "rowFailed", message: result.error.message }, { status: result.status, headers: NO_STORE });
    return redirect(`/console/organizations/${orgId}/webhooks?done=${intent}`);
  }
  if (intent === "delete") {
    const result = await console.admin("webhooks.delete", { params: { orgId, id } });
    if (!result.ok) return data<ActionResult>({ kind: "rowFailed", message: result.error.message }, { status: result.status, headers: NO_STORE });
    return redirect(`/console/organizations/${orgId}/webhooks?done=delete`);
  }
  if (intent === "rotate") {
    const result = await console.admin("webhooks.rotateSecret", { params: { orgId, id } });
    if (!result.ok) return data<ActionResult>({ kind: "rowFailed", message: result.error.message }, { status: result.status, headers: NO_STORE });
    // The secret is in this one response only; the page that shows it is never cached.
    return data<ActionResult>({ kind: "secret", url: result.body.url, secret: result.body.secret, rotated: true }, { headers: NO_STORE });
  }
  const input = createInput(form);
  const parsed = WebhookEndpointCreateSchema.safeParse(input);
  if (!parsed.success) return data<ActionResult>({ kind: "invalid", values: input, errors: zodFieldErrors(parsed.error) }, { status: 422, headers: NO_STORE });
  const created = await console.admin("webhooks.create", { params: { orgId }, body: parsed.data });
  if (!created.ok) {
    const errors = created.error.details ? detailErrors(created.error.details, ["url", "eventTypes", "description"]) : { form: created.error.message };
    return data<ActionResult>({ kind: "invalid", values: input, errors }, { status: created.status, headers: NO_STORE });
  }
  return data<ActionResult>({ kind: "secret", url: created.body.url, secret: created.body.secret, rotated: false }, { headers: NO_STORE });
}

export default function Webhooks() {
  const { org, endpoints, error, done } = useLoaderData<typeof loader>();
  const result = useActionData<typeof action>();
  const { t } = useTranslation("console");
  const errors = result?.kind === "invalid" ? result.errors : {};
  const values = result?.kind === "invalid" ? result.values : undefined;
  const families = AUDIT_EVENT_FAMILIES;
  return (
    <>
      <p className="breadcrumb"><Link to={`/console/organizations/${org.id}`}>{org.name}</Link></p>
      <h1>{t("webhooks.title")}</h1>
      <p className="muted">{t("webhooks.intro")}</p>
      {result?.kind === "secret" ? (
        <section className="panel secret" aria-labelledby="secret-title">
          <h2 id="secret-title">{result.rotated ? t("webhooks.rotatedTitle") : t("webhooks.createdTitle")}</h2>
          <p>{t("webhooks.secretText", { url: result.url })}</p>
          <div className="field">
            <label htmlFor="webhook-secret">{t("webhooks.secret")}</label>
            <input id="webhook-secret" readOnly value={result.secret} className="secret-value" onFocus={(e) => e.currentTarget.select()} />
          </div>
          <CopyButton value={result.secret} label={t("clients.copy")} />
        </section>
      ) : null}
      {done ? <Notice kind="info">{t(`webhooks.done.${done}`)}</Notice> : null}
      {error ? <Notice kind="error">{error}</Notice> : null}
      {result?.kind === "rowFailed" ? <Notice kind="error">{result.message}</Notice> : null}
      <ListTable
        rows={endpoints}
        rowKey={(e) => e.id}
        empty={t("webhooks.empty")}
        columns={[
          { header: t("webhooks.url"), cell: (e) => <Link to={`/console/organizations/${org.id}/webhooks/${e.id}`}><code>{e.url}</code></Link> },
          { header: t("webhooks.events"), cell: (e) => e.eventTypes.join(", ") },
          {
            header: t("common.status"),
            cell: (e) => (e.enabled ? t("webhooks.on") : e.disabledReason ? t("webhooks.offFailures", { count: e.consecutiveFailures }) : t("webhooks.off")),
          },
          {
            header: t("common.actions"),
            cell: (e) => (
              <ActionMenu name={e.url}>
                <Link to={`/console/organizations/${org.id}/webhooks/${e.id}`}>{t("webhooks.deliveries")}</Link>
                {e.enabled ? (
                  <ConfirmAction intent="disable" label={t("webhooks.disable")} question={t("webhooks.confirmDisable", { url: e.url })} fields={{ endpointId: e.id }} />
                ) : (
                  <ConfirmAction intent="enable" label={t("webhooks.enable")} question={t("webhooks.confirmEnable", { url: e.url })} fields={{ endpointId: e.id }} />
                )}
                <ConfirmAction intent="rotate" label={t("webhooks.rotate")} question={t("webhooks.confirmRotate", { url: e.url })} fields={{ endpointId: e.id }} />
                <ConfirmAction intent="delete" danger label={t("webhooks.delete")} question={t("webhooks.confirmDelete", { url: e.url })} fields={{ endpointId: e.id }} />
              </ActionMenu>
            ),
          },
        ]}
      />

      <Form method="post" reloadDocument noValidate className="panel form" aria-labelledby="new-webhook-title">
        <h2 id="new-webhook-title">{t("webhooks.new")}</h2>
        {errors.form ? <Notice kind="error">{errors.form}</Notice> : null}
        <Csrf />
        <input type="hidden" name="intent" value="create" />
        <TextField name="url" label={t("webhooks.url")} defaultValue={values?.url} error={errors.url} hint={t("webhooks.urlHint")} required />
        <TextField name="description" label={t("webhooks.description")} defaultValue={values?.description} error={errors.description} />
        <CheckboxGroup
          name="eventFamilies"
          legend={t("webhooks.families")}
          options={families.map((f) => ({ value: f, label: f }))}
          checked={values?.eventTypes.filter((v) => families.includes(v)) ?? []}
          error={errors.eventTypes}
        />
        <TextField
          name="exactEventTypes"
          label={t("webhooks.exact")}
          defaultValue={values?.eventTypes.filter((v) => !families.includes(v)).join(" ")}
          hint={t("webhooks.exactHint")}
        />
        <button type="submit" className="button">{t("webhooks.create")}</button>
      </Form>
    </>
  );
}
