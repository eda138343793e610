import { data, type ActionFunctionArgs, type LoaderFunctionArgs, type MetaFunction } from "@remix-run/node";
import { Form, Link, useActionData, useLoaderData } from "@remix-run/react";
import { useTranslation } from "react-i18next";
import { z } from "zod";
import { stashImport, takeImport } from "~/.server/console/import-stash";
import { consoleHeaders, NO_STORE, requireConsole, requireConsoleForm } from "~/.server/console/page";
import { ListTable } from "~/components/console/list-table";
import { BusyButton, CopyButton, Csrf, Notice, SelectField } from "~/components/console/ui";
import { MAX_IMPORT_BYTES } from "~/schemas/transfer";
import { USER_IMPORT_FORMATS, type UserImportReport } from "~/schemas/user-import";

export const headers = consoleHeaders;
export const meta: MetaFunction = () => [{ title: "Import users · Porta console" }];

/**
 * Users from another system's export (decision 087): upload a Keycloak realm export, an Auth0
 * export or Porta's CSV/JSON list, read the report of what would happen, then apply exactly that
 * file (kept for this console session between the two steps). New client secrets of a Keycloak
 * import are shown once, here.
 */
export async function loader(args: LoaderFunctionArgs) {
  const console = await requireConsole(args);
  const org = await console.admin("organizations.get", { params: { id: args.params.id! } });
  if (!org.ok) throw data({ message: "not_found" }, { status: 404 });
  return data({ org: { id: org.body.id, name: org.body.name } }, { headers: NO_STORE });
}

const Stashed = z.object({ format: z.enum(USER_IMPORT_FORMATS), data: z.string() });

type ActionResult =
  | { kind: "error"; field: "file" | "form"; message: string }
  | { kind: "preview"; report: UserImportReport; token: string }
  | { kind: "applied"; report: UserImportReport };

export async function action(args: ActionFunctionArgs) {
  const { console, form } = await requireConsoleForm(args, MAX_IMPORT_BYTES + 64 * 1024);
  const { services } = args.context;
  const orgId = args.params.id!;
  const fail = (status: number, field: "file" | "form", message: string) => data<ActionResult>({ kind: "error", field, message }, { status, headers: NO_STORE });
  const applying = form.get("intent") === "apply";
  let source: z.infer<typeof Stashed>;
  if (applying) {
    const stashed = await takeImport(services, console.sessionId, String(form.get("token") ?? ""));
    const parsed = stashed === null ? null : Stashed.safeParse(JSON.parse(stashed));
    if (!parsed?.success) return fail(409, "form", "expired");
    source = parsed.data;
  } else {
    const file = form.get("file");
    const format = Stashed.shape.format.safeParse(form.get("format"));
    if (!(file instanceof File) || file.size === 0 || !format.success) return fail(422, "file", "choose");
    source = { format: format.data, data: await file.text() };
  }
  const result = await console.admin(applying ? "userImports.apply" : "userImports.preview", { params: { orgId }, body: source });
  if (!result.ok) {
    const details = result.error.details ?? [];
    return fail(result.status, "file", details.length ? details.slice(0, 5).map((d) => `${d.field}: ${d.message}`).join("; ") : result.error.message);
  }
  if (applying) return data<ActionResult>({ kind: "applied", report: result.body }, { headers: NO_STORE });
  const token = await stashImport(services, console.sessionId, JSON.stringify(source));
  return data<ActionResult>({ kind: "preview", report: result.body, token }, { headers: NO_STORE });
}

function Report({ report, applied }: { report: UserImportReport; applied: boolean }) {
  const { t } = useTranslation("console");
  return (
    <>
      <p>{t("userImports.summary", { created: report.created, updated: report.updated, unchanged: report.unchanged, skipped: report.skipped.length })}</p>
      <p>{t("userImports.extras", { passwords: report.importedPasswords, totp: report.importedTotp, roles: report.rolesCreated.length, claims: report.claimValues })}</p>
      {report.skipped.length > 0 ? (
        <>
          <h3>{t("userImports.skipped")}</h3>
          <ListTable
            caption={t("userImports.skipped")}
            rows={report.skipped}
            rowKey={(s) => `${s.reason}:${s.row}:${s.sourceId ?? ""}`}
            columns={[
              { header: t("userImports.row"), cell: (s) => s.row },
              { header: t("userImports.sourceId"), cell: (s) => s.sourceId ?? "" },
              { header: t("userImports.email"), cell: (s) => s.email ?? "" },
              { header: t("userImports.reason"), cell: (s) => `${t(`userImports.reasons.${s.reason}`)}${s.detail ? ` (${s.detail})` : ""}` },
            ]}
          />
        </>
      ) : null}
      {report.clients.length > 0 ? (
        <>
          <h3>{t("userImports.clients")}</h3>
          <ListTable
            caption={t("userImports.clients")}
            rows={report.clients}
            rowKey={(c) => c.sourceId}
            columns={[
              { header: t("userImports.sourceId"), cell: (c) => <>{c.name} <code>{c.sourceId}</code></> },
              { header: t("userImports.outcome"), cell: (c) => `${t(`userImports.outcomes.${c.outcome}`)}${c.detail ? ` (${c.detail})` : ""}` },
              {
                header: t("userImports.clientId"),
                cell: (c) => (
                  <>
                    {c.clientId ? <code>{c.clientId}</code> : null}
                    {c.clientSecret ? (
                      <>
                        {" "}
                        <code data-testid="imported-client-secret">{c.clientSecret}</code> <CopyButton value={c.clientSecret} label={t("userImports.copySecret")} />
                      </>
                    ) : null}
                  </>
                ),
              },
            ]}
          />
        </>
      ) : null}
      {applied && report.clients.some((c) => c.clientSecret) ? <Notice kind="info">{t("userImports.secretsOnce")}</Notice> : null}
      {report.totpNotCarried.length > 0 ? <p>{t("userImports.totpNotCarried", { count: report.totpNotCarried.length })}</p> : null}
      {report.claimValuesRefused.length > 0 ? <p>{t("userImports.claimsRefused", { count: report.claimValuesRefused.length })}</p> : null}
    </>
  );
}

export default function UserImports() {
  const { org } = useLoaderData<typeof loader>();
  const result = useActionData<typeof action>();
  const { t } = useTranslation("console");
  const error = result?.kind === "error" ? result : null;
  const message = (m: string) => (m === "choose" || m === "expired" ? t(`userImports.errors.${m}`) : m);
  return (
    <>
      <p>
        <Link to={`/console/organizations/${org.id}`}>{org.name}</Link>
      </p>
      <h1>{t("userImports.title")}</h1>
      <p className="muted">{t("userImports.intro")}</p>
      {error?.field === "form" ? <Notice kind="error">{message(error.message)}</Notice> : null}
      {result?.kind === "applied" ? (
        <section className="panel" aria-labelledby="applied-title">
          <h2 id="applied-title">{t("userImports.applied")}</h2>
          <Report report={result.report} applied />
        </section>
      ) : null}
      {result?.kind === "preview" ? (
        <section className="panel" aria-labelledby="preview-title">
          <h2 id="preview-title">{t("userImports.preview")}</h2>
          <Report report={result.report} applied={false} />
          <Form method="post" reloadDocument>
            <Csrf />
            <input type="hidden" name="intent" value="apply" />
            <input type="hidden" name="token" value={result.token} />
            <BusyButton label={t("userImports.apply")} busyLabel={t("userImports.working")} />
          </Form>
        </section>
      ) : (
        <Form method="post" reloadDocument encType="multipart/form-data" className="panel form" aria-labelledby="upload-title">
          <h2 id="upload-title">{t("userImports.upload")}</h2>
          <Csrf />
          <input type="hidden" name="intent" value="preview" />
          <SelectField name="format" label={t("userImports.format")} defaultValue="keycloak" options={USER_IMPORT_FORMATS.map((f) => ({ value: f, label: t(`userImports.formats.${f}`) }))} />
          <div className="field">
            <label htmlFor="file">{t("userImports.file")}</label>
            <input id="file" name="file" type="file" accept=".json,.ndjson,.csv,.txt,application/json,text/csv" required aria-describedby={error?.field === "file" ? "file-error" : undefined} />
            {error?.field === "file" ? (
              <p id="file-error" className="field-error" role="alert">
                {message(error.message)}
              </p>
            ) : null}
          </div>
          <BusyButton label={t("userImports.previewButton")} busyLabel={t("userImports.working")} />
        </Form>
      )}
    </>
  );
}
