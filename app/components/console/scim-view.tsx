import type { ReactNode } from "react";
import { Form } from "@remix-run/react";
import { useTranslation } from "react-i18next";
import { DEFAULT_SCIM_TOKEN_DAYS, type ScimToken } from "~/schemas/scim-token";
import { ListTable, Moment } from "./list-table";
import { ConfirmAction, Csrf, CopyButton, Notice, TextField } from "./ui";

/** What a console's SCIM page says after a form: field errors, or the token just issued (shown this once). */
export type ScimPageOutcome = { kind: "invalid"; errors: Record<string, string> } | { kind: "issued"; token: string };

/**
 * The SCIM page of both consoles (decision 084): the organization's SCIM base URL, the token just
 * issued, the tokens with Revoke, and Issue. `breadcrumb` is what differs between the service
 * console and an organization's own.
 */
export function ScimView(props: { endpoint: string; tokens: ScimToken[]; done: string | null; result: ScimPageOutcome | undefined; breadcrumb?: ReactNode }) {
  const { endpoint, tokens, done, result, breadcrumb } = props;
  const { t } = useTranslation("console");
  const errors = result?.kind === "invalid" ? result.errors : {};
  return (
    <>
      {breadcrumb}
      <h1>{t("scim.title")}</h1>
      <p className="muted">{t("scim.intro")}</p>
      {done ? <Notice kind="info">{t("scim.done.revoked")}</Notice> : null}
      <div className="field">
        <label htmlFor="scim-endpoint">{t("scim.endpoint")}</label>
        <input id="scim-endpoint" readOnly value={endpoint} />
      </div>
      <h2>{t("scim.tokens")}</h2>
      {result?.kind === "issued" ? (
        <section className="panel secret" aria-labelledby="token-title">
          <h3 id="token-title">{t("scim.tokenOnce")}</h3>
          <p>{t("scim.tokenOnceText")}</p>
          <div className="field">
            <label htmlFor="scim-token">{t("scim.token")}</label>
            <input id="scim-token" readOnly value={result.token} className="secret-value" />
          </div>
          <CopyButton value={result.token} label={t("scim.copy")} />
        </section>
      ) : null}
      {errors.form ? <Notice kind="error">{errors.form}</Notice> : null}
      <ListTable
        rows={tokens}
        rowKey={(token) => token.id}
        empty={t("scim.noTokens")}
        caption={t("scim.tokens")}
        columns={[
          { header: t("scim.name"), cell: (token) => token.name },
          { header: t("scim.prefix"), cell: (token) => <code>{`${token.prefix}…`}</code> },
          { header: t("scim.lastUsed"), cell: (token) => (token.lastUsedAt ? <Moment iso={token.lastUsedAt} /> : t("scim.never")) },
          { header: t("scim.expires"), cell: (token) => <Moment iso={token.expiresAt} /> },
          { header: t("common.status"), cell: (token) => t(`scim.status.${token.status}`) },
          {
            header: t("common.actions"),
            cell: (token) =>
              token.status === "revoked" ? null : (
                <ConfirmAction intent="revoke" label={t("scim.revoke")} question={t("scim.confirmRevoke", { prefix: token.prefix })} fields={{ tokenId: token.id }} />
              ),
          },
        ]}
      />
      <Form method="post" reloadDocument noValidate className="panel form" aria-labelledby="new-token-title">
        <h3 id="new-token-title">{t("scim.issue")}</h3>
        <Csrf />
        <input type="hidden" name="intent" value="issue" />
        <TextField name="name" label={t("scim.name")} error={errors.name} />
        <TextField name="expiresInDays" label={t("scim.expiresInDays")} defaultValue={String(DEFAULT_SCIM_TOKEN_DAYS)} error={errors.expiresInDays} />
        <button type="submit" className="button button-inline">{t("scim.issue")}</button>
      </Form>
    </>
  );
}
