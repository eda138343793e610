import type { ReactNode } from "react";
import { Form } from "@remix-run/react";
import { useTranslation } from "react-i18next";
import type { DomainsPageOutcome, OrganizationDomain } from "~/schemas/domain";
import { ListTable, Moment } from "./list-table";
import { ConfirmAction, CopyButton, Csrf, Notice, TextField } from "./ui";

/**
 * The domains page of both consoles (decision 086): the TXT record of each domain not yet verified,
 * the list with Verify now and Remove, the claims of connections no verified domain backs, and Add.
 * `breadcrumb` and `providerLink` are what differ between the service console and an organization's own.
 */
export function DomainsView(props: {
  domains: OrganizationDomain[];
  unverifiedClaims: Array<{ domain: string; provider: string; providerId: string }>;
  done: string | null;
  result: DomainsPageOutcome | undefined;
  breadcrumb?: ReactNode;
  providerLink?: (claim: { provider: string; providerId: string }) => ReactNode;
}) {
  const { domains, unverifiedClaims, done, result, breadcrumb, providerLink } = props;
  const { t } = useTranslation("console");
  const errors = result?.kind === "invalid" ? result.errors : {};
  return (
    <>
      {breadcrumb}
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
                <code>{c.domain}</code> · {providerLink ? providerLink(c) : c.provider}
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
