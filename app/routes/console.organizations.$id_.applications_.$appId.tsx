import { data, redirect, type ActionFunctionArgs, type LoaderFunctionArgs, type MetaFunction } from "@remix-run/node";
import { Link, useActionData, useLoaderData } from "@remix-run/react";
import { useTranslation } from "react-i18next";
import { consoleHeaders, NO_STORE, requireConsole, requireConsoleForm, type Console } from "~/.server/console/page";
import { appUpdateInput, moduleInput, type AppFormValues } from "~/components/console/app-fields";
import { AppActions, AppClients, AppEditForm, ModulesSection } from "~/components/console/app-sections";
import { CLAIM_FIELDS, claimInput, ClaimsSection, type ClaimValues } from "~/components/console/claim-section";
import { detailErrors, intentIn, text, zodFieldErrors } from "~/components/console/forms";
import { HistorySection, historyQuery } from "~/components/console/history";
import { Notice } from "~/components/console/ui";
import { ApplicationUpdateSchema, ModuleCreateSchema, ModuleUpdateSchema, type Application } from "~/schemas/application";
import { CustomClaimCreateSchema } from "~/schemas/claim";

export const headers = consoleHeaders;
export const meta: MetaFunction = () => [{ title: "Application · Porta console" }];

export async function loader(args: LoaderFunctionArgs) {
  const console = await requireConsole(args);
  const appId = args.params.appId!;
  const url = new URL(args.request.url);
  const [app, claims, modules, history, clients] = await Promise.all([
    console.admin("applications.get", { params: { id: appId } }),
    console.admin("customClaims.list", { params: { appId }, query: { limit: "100" } }),
    console.admin("applications.listModules", { params: { id: appId }, query: { limit: "100" } }),
    console.admin("applications.getHistory", { params: { id: appId }, query: historyQuery(args.request.url) }),
    console.admin("clients.list", { query: { organizationId: args.params.id!, applicationId: appId, limit: "100", sort: "name" } }),
  ]);
  if (!app.ok || app.body.organizationId !== args.params.id) throw data({ message: "not_found" }, { status: 404 });
  return data(
    {
      app: app.body,
      version: app.version!,
      claims: claims.ok ? claims.body.data : [],
      modules: modules.ok ? modules.body.data : [],
      history: history.ok ? history.body : null,
      clients: clients.ok ? clients.body.data : [],
      done: url.searchParams.get("done"),
    },
    { headers: NO_STORE },
  );
}

type ActionResult =
  | { kind: "app"; values: AppFormValues; errors: Record<string, string>; conflict?: Application }
  | { kind: "addModule" | "updateModule"; moduleId?: string; values: AppFormValues; errors: Record<string, string> }
  | { kind: "claim"; values: ClaimValues; errors: Record<string, string> }
  | { kind: "failed"; message: string };

const reply = (result: ActionResult, status: number) => data<ActionResult>(result, { status, headers: NO_STORE });
const fieldsOrForm = (details: Parameters<typeof detailErrors>[0], message: string, shown: readonly string[]) => (details ? detailErrors(details, shown) : { form: message });

async function update(console: Console, appId: string, form: FormData) {
  const values = appUpdateInput(form);
  const parsed = ApplicationUpdateSchema.safeParse(values);
  if (!parsed.success) return reply({ kind: "app", values, errors: zodFieldErrors(parsed.error) }, 422);
  const version = Number(form.get("version"));
  const result = await console.admin("applications.update", { params: { id: appId }, body: parsed.data, ifMatch: Number.isSafeInteger(version) ? version : undefined });
  if (result.ok) return null;
  if (result.status === 409 && result.error.code === "etag_mismatch") {
    // Never overwrite: show what is saved now beside what this person typed.
    const current = await console.admin("applications.get", { params: { id: appId } });
    if (current.ok) return reply({ kind: "app", values, errors: {}, conflict: current.body }, 409);
  }
  return reply({ kind: "app", values, errors: fieldsOrForm(result.error.details, result.error.message, ["name", "description"]) }, result.status);
}

async function saveModule(console: Console, appId: string, form: FormData, kind: "addModule" | "updateModule") {
  const values = moduleInput(form);
  const moduleId = text(form, "moduleId") ?? "";
  const parsed = kind === "addModule" ? ModuleCreateSchema.safeParse(values) : ModuleUpdateSchema.safeParse(values);
  if (!parsed.success) return reply({ kind, moduleId, values, errors: zodFieldErrors(parsed.error) }, 422);
  const result =
    kind === "addModule"
      ? await console.admin("applications.addModule", { params: { id: appId }, body: ModuleCreateSchema.parse(parsed.data) })
      : await console.admin("applications.updateModule", { params: { id: appId, moduleId }, body: parsed.data });
  if (result.ok) return null;
  return reply({ kind, moduleId, values, errors: fieldsOrForm(result.error.details, result.error.message, ["name", "description"]) }, result.status);
}

/** Module buttons: the operation each runs on the module named in the form. */
const MODULE_INTENTS: Record<string, (c: Console, ids: { id: string; moduleId: string }) => ReturnType<Console["admin"]>> = {
  deactivateModule: (c, params) => c.admin("applications.deactivateModule", { params }),
  activateModule: (c, params) => c.admin("applications.updateModule", { params, body: { status: "active" } }),
  deleteModule: (c, params) => c.admin("applications.deleteModule", { params }),
};

async function createClaim(console: Console, appId: string, form: FormData) {
  const values = claimInput(form);
  const parsed = CustomClaimCreateSchema.safeParse(values);
  if (!parsed.success) return reply({ kind: "claim", values, errors: zodFieldErrors(parsed.error) }, 422);
  const created = await console.admin("customClaims.create", { params: { appId }, body: parsed.data });
  if (created.ok) return null;
  return reply({ kind: "claim", values, errors: fieldsOrForm(created.error.details, created.error.message, CLAIM_FIELDS) }, created.status);
}

export async function action(args: ActionFunctionArgs) {
  const { console, form } = await requireConsoleForm(args);
  const orgId = args.params.id!;
  const appId = args.params.appId!;
  const here = `/console/organizations/${orgId}/applications/${appId}`;
  const owner = await console.admin("applications.get", { params: { id: appId } });
  if (!owner.ok || owner.body.organizationId !== orgId) return reply({ kind: "failed", message: "not found" }, 404);
  const intent = text(form, "intent") ?? "createClaim";

  if (intent === "update") return (await update(console, appId, form)) ?? redirect(`${here}?done=saved`);
  if (intent === "addModule" || intent === "updateModule") return (await saveModule(console, appId, form, intent)) ?? redirect(`${here}?done=${intent}`);
  if (intent === "createClaim") return (await createClaim(console, appId, form)) ?? redirect(`${here}?done=claim`);
  if (intent === "delete") {
    const result = await console.admin("applications.delete", { params: { id: appId } });
    if (!result.ok) return reply({ kind: "failed", message: result.error.message }, result.status);
    return redirect(`/console/organizations/${orgId}/applications?done=deleted`);
  }
  const run = intentIn(MODULE_INTENTS, intent);
  if (!run) return reply({ kind: "failed", message: "unknown action" }, 400);
  const result = await run(console, { id: appId, moduleId: text(form, "moduleId") ?? "" });
  if (!result.ok) return reply({ kind: "failed", message: result.error.message }, result.status);
  return redirect(`${here}?done=${intent}`);
}

export default function ApplicationPage() {
  const { app, version, claims, modules, history, clients, done } = useLoaderData<typeof loader>();
  const result = useActionData<typeof action>();
  const { t } = useTranslation("console");
  const appResult = result?.kind === "app" ? result : undefined;
  return (
    <>
      <p className="breadcrumb"><Link to={`/console/organizations/${app.organizationId}/applications`}>{t("apps.title")}</Link></p>
      <h1>{app.name}</h1>
      {app.description ? <p className="muted">{app.description}</p> : null}
      <p className="muted">{t(`users.status.${app.status}`)}</p>
      <p className="muted">{t("apps.explain")}</p>
      {done === "claim" ? <Notice kind="info">{t("claims.created")}</Notice> : done ? <Notice kind="info">{t(`appDetail.done.${done}`)}</Notice> : null}
      {result?.kind === "failed" ? <Notice kind="error">{result.message}</Notice> : null}
      <AppEditForm app={app} version={version} values={appResult?.values} errors={appResult?.errors ?? {}} conflict={appResult?.conflict} />
      <AppClients organizationId={app.organizationId} applicationId={app.id} clients={clients} />
      <ModulesSection modules={modules} failed={result?.kind === "addModule" || result?.kind === "updateModule" ? result : undefined} />
      <ClaimsSection claims={claims} values={result?.kind === "claim" ? result.values : undefined} errors={result?.kind === "claim" ? result.errors : undefined} />
      <AppActions app={app} />
      <HistorySection page={history} targetId={app.id} />
    </>
  );
}
