import { data, redirect, type ActionFunctionArgs, type LoaderFunctionArgs, type MetaFunction } from "@remix-run/node";
import { Form, useActionData, useLoaderData } from "@remix-run/react";
import { useTranslation } from "react-i18next";
import { consoleHeaders, NO_STORE } from "~/.server/console/page";
import { requireOrganizationConsole, requireOrganizationConsoleForm } from "~/.server/console/organization-console";
import { zodFieldErrors } from "~/components/console/forms";
import { ListTable, Moment } from "~/components/console/list-table";
import { ConfirmAction, CopyButton, Csrf, Notice, TextField } from "~/components/console/ui";
import { OrganizationDomainCreateSchema } from "~/schemas/domain";

/** The organization console's page (decision 090): the service console's, bound to the signed-in administrator's organization through its door. */
export const headers = consoleHeaders;
export const meta: MetaFunction = () => [{ title: "Domains · Porta" }];

/**
 * An organization's email domains (decision 086): each with the DNS TXT record that proves it,
 * Verify now and Remove, and the domains its connections claim without the organization having
 * verified them.
 */
export async function loader(args: LoaderFunctionArgs) {
  const console = await requireOrganizationConsole(args);
  const orgId = console.organizationId;
  const [org, domains, providers] = await Promise.all([
    console.admin("organizations.get", { params: { id: orgId } }),
    console.admin("domains.list", { params: { orgId } }),
    console.admin("identityProviders.list", { query: { organizationId: orgId, limit: "100" } }),
  ]);
  if (!org.ok || !domains.ok) throw data({ message: "not_found" }, { status: 404 });
  const verified = new Set(domains.body.data.filter((d) => d.status === "verified").map((d) => d.domain));
  // Claims of the organization's connections that no verified domain backs: discovery still follows them, linking by assumed email does not.
  const unverifiedClaims = (providers.ok ? providers.body.data : []).flatMap((p) => p.domains.filter((d) => !verified.has(d)).map((domain) => ({ domain, provider: p.name, providerId: p.id })));
  return data({ org: org.body, domains: domains.body.data, unverifiedClaims, done: new URL(args.request.url).searchParams.get("done") }, { headers: NO_STORE });
}

type ActionResult = { kind: "invalid"; errors: Record<string, string>; domain?: string } | { kind: "checked"; id: string; status: string; lastError: string | null };

export async function action(args: ActionFunctionArgs) {
  const { console, form } = await requireOrganizationConsoleForm(args);
  const orgId = console.organizationId;
  const intent = String(form.get("intent") ?? "");
  const domainId = String(form.get("domainId") ?? "");
  if (intent === "remove" || intent === "verify") {
    // The page acts on this organization's domains only: another organization's id is not found here.
    const found = await console.admin("domains.get", { params: { id: domainId } });
    if (!found.ok || found.body.organizationId !== orgId) throw data({ message: "not_found" }, { status: 404 });
  }
  if (intent === "remove") {
    const removed = await console.admin("domains.delete", { params: { id: domainId } });
    if (!removed.ok) return data<ActionResult>({ kind: "invalid", errors: { form: removed.error.message } }, { status: removed.status, headers: NO_STORE });
    return redirect(`/${console.slug}/console/domains?done=removed`);
  }
  if (intent === "verify") {
    const checked = await console.admin("domains.verify", { params: { id: domainId } });
    if (!checked.ok) return data<ActionResult>({ kind: "invalid", errors: { form: checked.error.message } }, { status: checked.status, headers: NO_STORE });
    return data<ActionResult>({ kind: "checked", id: checked.body.id, status: checked.body.status, lastError: checked.body.lastError }, { headers: NO_STORE });
  }
  const typed = String(form.get("domain") ?? "");
  const parsed = OrganizationDomainCreateSchema.safeParse({ domain: typed });
  if (!parsed.success) return data<ActionResult>({ kind: "invalid", errors: zodFieldErrors(parsed.error), domain: typed }, { status: 422, headers: NO_STORE });
  const added = await console.admin("domains.add", { params: { orgId }, body: parsed.data });
  if (!added.ok) {
    const errors = added.error.details?.length ? Object.fromEntries(added.error.details.map((d) => [d.field, d.message])) : { form: added.error.message };
    return data<ActionResult>({ kind: "invalid", errors, domain: typed }, { status: added.status, headers: NO_STORE });
  }
  return redirect(`/${console.slug}/console/domains?done=added`);
}

export default function Domains() {
  const { domains, unverifiedClaims, done } = useLoaderData<typeof loader>();
  const result = useActionData<typeof action>();
  const { t } = useTranslation("console");
  const errors = result?.kind === "invalid" ? result.errors : {};
  return (
    <>
      <h1>{t("domains.title")}</h1>
      <p className="muted">{t("domains.intro")}</p>
      {done ? <Notice kind="info">{t(done === "removed" ? "domains.done.removed" : "domains.done.added")}</Notice> : null}
      {result?.kind === "checked" ? (
        <Notice kind={result.status === "verified" ? "info" : "error"}>{result.status === "verified" ? t("domains.checkedOk") : t("domains.checkedFailed", { error: result.lastError ?? "" })}</Notice>
      ) : null}
      {errors.form ? <Notice kind="error">{errors.form}</Notice> : null}
      {domains.map((d) =>
        d.status === "verified" ? null : (
          <section key={d.id} className="panel" aria-labelledby={`record-${d.id}`}>
            <h2 id={`record-${d.id}`}>{t("domains.recordFor", { domain: d.domain })}</h2>
            <p>{t("domains.recordText")}</p>
            <dl>
              <dt>{t("domains.recordType")}</dt>
              <dd><code>TXT</code></dd>
              <dt>{t("domains.recordName")}</dt>
              <dd><code>{d.record.name}</code> <CopyButton value={d.record.name} label={t("domains.copyName")} /></dd>
              <dt>{t("domains.recordValue")}</dt>
              <dd><code>{d.record.value}</code> <CopyButton value={d.record.value} label={t("domains.copyValue")} /></dd>
            </dl>
          </section>
        ),
      )}
      <ListTable
        rows={domains}
        rowKey={(d) => d.id}
        empty={t("domains.none")}
        caption={t("domains.title")}
        columns={[
          { header: t("domains.domain"), cell: (d) => <code>{d.domain}</code> },
          { header: t("common.status"), cell: (d) => t(`domains.status.${d.status}`) },
          { header: t("domains.claimedBy"), cell: (d) => d.claimedBy.map((c) => c.name).join(", ") },
          { header: t("domains.lastChecked"), cell: (d) => (d.lastCheckedAt ? <Moment iso={d.lastCheckedAt} /> : "") },
          { header: t("domains.lastError"), cell: (d) => d.lastError ?? "" },
          {
            header: t("common.actions"),
            cell: (d) => (
              <>
                <Form method="post" reloadDocument className="inline-form">
                  <Csrf />
                  <input type="hidden" name="intent" value="verify" />
                  <input type="hidden" name="domainId" value={d.id} />
                  <button type="submit" className="button button-inline button-secondary">{t("domains.verify")}</button>
                </Form>
                <ConfirmAction intent="remove" label={t("domains.remove")} question={t("domains.confirmRemove", { domain: d.domain })} fields={{ domainId: d.id }} danger />
              </>
            ),
          },
        ]}
      />
      {unverifiedClaims.length > 0 ? (
        <section className="panel" aria-labelledby="unverified-claims">
          <h2 id="unverified-claims">{t("domains.unverifiedClaims")}</h2>
          <p className="muted">{t("domains.unverifiedClaimsText")}</p>
          <ul>
            {unverifiedClaims.map((c) => (
              <li key={`${c.providerId}-${c.domain}`}>
                <code>{c.domain}</code> · {c.provider}
              </li>
            ))}
          </ul>
        </section>
      ) : null}
      <Form method="post" reloadDocument noValidate className="panel form" aria-labelledby="add-domain-title">
        <h2 id="add-domain-title">{t("domains.add")}</h2>
        <Csrf />
        <input type="hidden" name="intent" value="add" />
        <TextField name="domain" label={t("domains.domain")} hint={t("domains.domainHint")} defaultValue={result?.kind === "invalid" ? (result.domain ?? "") : ""} error={errors.domain} required />
        <button type="submit" className="button button-inline">{t("domains.add")}</button>
      </Form>
    </>
  );
}
