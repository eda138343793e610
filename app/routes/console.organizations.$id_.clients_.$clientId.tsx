import { data, redirect, type ActionFunctionArgs, type LoaderFunctionArgs, type MetaFunction } from "@remix-run/node";
import { Link, useActionData, useLoaderData } from "@remix-run/react";
import { useTranslation } from "react-i18next";
import type { AdminResult } from "~/.server/console/gateway";
import { consoleHeaders, NO_STORE, requireConsole, requireConsoleForm, type Console } from "~/.server/console/page";
import { startTryIt, tryItRedirectUri, tryItRefusal } from "~/.server/console/try-it";
import { organizationEndpoints } from "~/.server/oidc/edge/endpoints";
import { LIFETIMES } from "~/.server/oidc/provider/lifetimes";
import { ClientResourceGrants, grantedScopesInput } from "~/components/console/api-resource-fields";
import { ClientActions, ClientEditForm, ClientSecrets, LoginMethodsPanel } from "~/components/console/client-sections";
import { CLIENT_FIELDS, clientUpdateInput, type ClientFormValues } from "~/components/console/client-fields";
import { detailErrors, intentIn, list, text, zodFieldErrors } from "~/components/console/forms";
import { HistorySection, historyQuery } from "~/components/console/history";
import { ClientIntegrationPanel } from "~/components/console/integration";
import { SecretOnce } from "~/components/console/secret-once";
import { TryItPanel } from "~/components/console/try-it";
import { Notice, SectionNav } from "~/components/console/ui";
import { ClientUpdateSchema, LoginMethodsBodySchema, SecretCreateSchema, type Client } from "~/schemas/client";

export const headers = consoleHeaders;
export const meta: MetaFunction = () => [{ title: "Client · Porta console" }];

export async function loader(args: LoaderFunctionArgs) {
  const console = await requireConsole(args);
  const orgId = args.params.id!;
  const id = args.params.clientId!;
  const client = await console.admin("clients.get", { params: { id } });
  if (!client.ok || client.body.organizationId !== orgId) throw data({ message: "not_found" }, { status: 404 });
  const url = new URL(args.request.url);
  const [org, apps, secrets, history, accessTokenTtlSeconds, resources, grants] = await Promise.all([
    console.admin("organizations.get", { params: { id: orgId } }),
    console.admin("applications.list", { query: { organizationId: orgId, limit: "100" } }),
    client.body.clientType === "confidential" ? console.admin("clients.listSecrets", { params: { id }, query: { limit: "100" } }) : null,
    console.admin("clients.getHistory", { params: { id }, query: historyQuery(args.request.url) }),
    args.context.services.settings.get("tokens.accessTokenTtlSeconds"),
    console.admin("apiResources.list", { params: { orgId }, query: { limit: "100" } }),
    console.admin("clients.listApiResources", { params: { id } }),
  ]);
  if (!org.ok) throw data({ message: org.error.code }, { status: org.status });
  return data(
    {
      client: client.body,
      version: client.version!,
      org: { id: org.body.id, name: org.body.name, defaultLoginMethods: org.body.defaultLoginMethods, oauth21: org.body.oauth21 },
      tryIt: { state: tryItRefusal(client.body, args.context.services.config.baseUrl) ?? "ready", redirectUri: tryItRedirectUri(args.context.services.config.baseUrl) } as const,
      endpoints: organizationEndpoints(args.context.services.config.baseUrl, org.body.slug),
      // A super-admin organization's client may call the Admin API (decision 017); another
      // organization's, that organization's own administration door (decision 090).
      offerAdminApiAccess: org.body.slug === args.context.services.config.superAdminSlug ? ("service" as const) : ("organization" as const),
      apps: apps.ok ? apps.body.data.map((a) => ({ id: a.id, name: a.name })) : [],
      secrets: secrets?.ok ? secrets.body.data : [],
      // Without admin:resource:read or admin:client:read the section is left out.
      resources: resources.ok && grants.ok ? { resources: resources.body.data, grants: grants.body.data } : null,
      history: history.ok ? history.body : null,
      // What an empty lifetime field means.
      defaults: { accessTokenTtlSeconds, refreshTokenTtlSeconds: LIFETIMES.RefreshToken },
      done: url.searchParams.get("done"),
    },
    { headers: NO_STORE },
  );
}

type ActionResult =
  | { kind: "invalid"; values: ClientFormValues; errors: Record<string, string> }
  | { kind: "conflict"; values: ClientFormValues; current: Client }
  | { kind: "loginInvalid"; errors: Record<string, string> }
  | { kind: "secret"; value: string }
  | { kind: "secretInvalid"; errors: Record<string, string> }
  | { kind: "failed"; message: string };

const reply = (result: ActionResult, status = 200) => data<ActionResult>(result, { status, headers: NO_STORE });

/** Buttons that run one operation on the client and come back to this page with a notice. */
const SIMPLE: Record<string, (c: Console, id: string, form: FormData) => Promise<AdminResult<unknown>>> = {
  activate: (c, id) => c.admin("clients.activate", { params: { id } }),
  deactivate: (c, id) => c.admin("clients.deactivate", { params: { id } }),
  clearLoginMethods: (c, id) => c.admin("clients.clearLoginMethods", { params: { id } }),
  revokeSecret: (c, id, form) => c.admin("clients.revokeSecret", { params: { id, secretId: text(form, "secretId") ?? "" } }),
  grantResource: (c, id, form) => c.admin("clients.grantApiResource", { params: { id, resourceId: text(form, "resourceId") ?? "" }, body: grantedScopesInput(form) }),
  revokeResource: (c, id, form) => c.admin("clients.revokeApiResource", { params: { id, resourceId: text(form, "resourceId") ?? "" } }),
};

async function update(console: Console, id: string, form: FormData) {
  const values = clientUpdateInput(form);
  const parsed = ClientUpdateSchema.safeParse(values);
  if (!parsed.success) return reply({ kind: "invalid", values, errors: zodFieldErrors(parsed.error) }, 422);
  const version = Number(form.get("version"));
  const result = await console.admin("clients.update", { params: { id }, body: parsed.data, ifMatch: Number.isSafeInteger(version) ? version : undefined });
  if (result.ok) return null;
  if (result.status === 409 && result.error.code === "etag_mismatch") {
    // Never overwrite: show what is saved now beside what this person typed.
    const current = await console.admin("clients.get", { params: { id } });
    if (current.ok) return reply({ kind: "conflict", values, current: current.body }, 409);
  }
  if (result.status === 422) return reply({ kind: "invalid", values, errors: detailErrors(result.error.details, CLIENT_FIELDS) }, 422);
  return reply({ kind: "failed", message: result.error.message }, result.status);
}

export async function action(args: ActionFunctionArgs) {
  const { console, form } = await requireConsoleForm(args);
  const orgId = args.params.id!;
  const id = args.params.clientId!;
  const here = `/console/organizations/${orgId}/clients/${encodeURIComponent(id)}`;
  const owner = await console.admin("clients.get", { params: { id } });
  if (!owner.ok || owner.body.organizationId !== orgId) return reply({ kind: "failed", message: "not found" }, 404);
  const intent = String(form.get("intent"));

  if (intent === "update") return (await update(console, id, form)) ?? redirect(`${here}?done=saved`);
  if (intent === "setLoginMethods") {
    const parsed = LoginMethodsBodySchema.safeParse({ loginMethods: list(form, "loginMethods") });
    if (!parsed.success) return reply({ kind: "loginInvalid", errors: zodFieldErrors(parsed.error) }, 422);
    const result = await console.admin("clients.setLoginMethods", { params: { id }, body: parsed.data });
    if (!result.ok) return reply({ kind: "loginInvalid", errors: detailErrors(result.error.details, ["loginMethods"]) }, result.status);
    return redirect(`${here}?done=setLoginMethods`);
  }
  if (intent === "generateSecret") {
    const label = text(form, "label")?.trim();
    const expiresOn = text(form, "expiresOn")?.trim();
    // A day is the end of that UTC day; anything else than a date is passed on for the schema to name.
    const expiresAt = expiresOn ? (/^\d{4}-\d{2}-\d{2}$/.test(expiresOn) ? `${expiresOn}T23:59:59.999Z` : expiresOn) : undefined;
    const parsed = SecretCreateSchema.safeParse({ ...(label ? { label } : {}), ...(expiresAt ? { expiresAt } : {}) });
    if (!parsed.success) return reply({ kind: "secretInvalid", errors: zodFieldErrors(parsed.error) }, 422);
    const result = await console.admin("clients.generateSecret", { params: { id }, body: parsed.data ?? {} });
    if (!result.ok) return reply({ kind: "secretInvalid", errors: result.error.details ? detailErrors(result.error.details, ["label", "expiresAt"]) : { form: result.error.message } }, result.status);
    // The value is in this one response only; the page that shows it is never cached.
    return reply({ kind: "secret", value: result.body.value });
  }
  if (intent === "tryIt" || intent === "tryItAddRedirect") {
    const { services } = args.context;
    let client = owner.body;
    if (intent === "tryItAddRedirect" && tryItRefusal(client, services.config.baseUrl) === "needs_redirect_uri") {
      const added = await console.admin("clients.update", { params: { id }, body: { redirectUris: [...client.redirectUris, tryItRedirectUri(services.config.baseUrl)] }, ifMatch: owner.version });
      if (!added.ok) return reply({ kind: "failed", message: added.error.message }, added.status);
      client = added.body;
    }
    const refusal = tryItRefusal(client, services.config.baseUrl);
    if (refusal) return reply({ kind: "failed", message: refusal }, 409);
    const org = await console.admin("organizations.get", { params: { id: orgId } });
    if (!org.ok) return reply({ kind: "failed", message: org.error.message }, org.status);
    const started = await startTryIt(services, console, { orgId, slug: org.body.slug, client });
    if (!started.ok) return reply({ kind: "failed", message: started.message }, 409);
    return redirect(started.location, { headers: NO_STORE });
  }
  if (intent === "delete") {
    const result = await console.admin("clients.delete", { params: { id } });
    if (!result.ok) return reply({ kind: "failed", message: result.error.message }, result.status);
    return redirect(`/console/organizations/${orgId}/clients?done=deleted`);
  }
  const run = intentIn(SIMPLE, intent);
  if (!run) return reply({ kind: "failed", message: "unknown action" }, 400);
  const result = await run(console, id, form);
  if (!result.ok) return reply({ kind: "failed", message: [result.error.message, ...(result.error.details ?? []).map((d) => `${d.field}: ${d.message}`)].join(" ") }, result.status);
  return redirect(`${here}?done=${intent}`);
}

export default function ClientPage() {
  const { client, version, org, tryIt, endpoints, offerAdminApiAccess, apps, secrets, resources, history, defaults, done } = useLoaderData<typeof loader>();
  const result = useActionData<typeof action>();
  const { t } = useTranslation("console");
  return (
    <>
      <p className="breadcrumb">
        <Link to={`/console/organizations/${org.id}`}>{org.name}</Link> › <Link to={`/console/organizations/${org.id}/clients`}>{t("clients.title")}</Link>
      </p>
      <h1>{client.name}</h1>
      <p className="muted">
        {t("clients.id")}: <code>{client.id}</code> · {t(`clients.types.${client.clientType}`)} · {t(`users.status.${client.status}`)}
      </p>
      <SectionNav
        sections={[
          { id: "client-integration-title", label: t("integration.clientTitle") },
          tryIt.state === "no_code_flow" ? null : { id: "try-it-title", label: t("tryIt.title") },
          { id: "edit-client-title", label: t("clientDetail.edit") },
          { id: "login-methods-title", label: t("clients.loginMethods") },
          client.clientType === "confidential" ? { id: "secrets-title", label: t("clientDetail.secrets") } : null,
          resources ? { id: "client-resources-title", label: t("apiResources.clientTitle") } : null,
          { id: "client-actions", label: t("common.actions") },
          { id: "history-title", label: t("history.title") },
        ]}
      />
      {done ? <Notice kind="info">{t(`clientDetail.done.${done}`)}</Notice> : null}
      {result?.kind === "failed" ? <Notice kind="error">{result.message}</Notice> : null}
      {result?.kind === "secret" ? <SecretOnce secret={result.value} /> : null}
      <ClientIntegrationPanel client={client} endpoints={endpoints} />
      <TryItPanel state={tryIt.state} redirectUri={tryIt.redirectUri} />
      <ClientEditForm client={client} version={version} apps={apps} offerAdminApiAccess={offerAdminApiAccess} defaults={defaults} oauth21={org.oauth21} result={result?.kind === "invalid" || result?.kind === "conflict" ? result : undefined} />
      <LoginMethodsPanel client={client} orgDefault={org.defaultLoginMethods} errors={result?.kind === "loginInvalid" ? result.errors : {}} />
      {client.clientType === "confidential" ? <ClientSecrets secrets={secrets} errors={result?.kind === "secretInvalid" ? result.errors : {}} /> : null}
      {resources ? <ClientResourceGrants resources={resources.resources} grants={resources.grants} /> : null}
      <ClientActions client={client} />
      <HistorySection page={history} targetId={client.id} />
    </>
  );
}
