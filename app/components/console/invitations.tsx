import { useTranslation } from "react-i18next";
import type { Invitation } from "~/schemas/user";
import { ListTable, Moment } from "./list-table";
import { ActionForm, ActionMenu, ConfirmAction } from "./ui";

/** The users page's pending invitations, each with Resend and Revoke in its row menu. */
export function PendingInvitations({ invitations }: { invitations: readonly Invitation[] | null }) {
  const { t } = useTranslation("console");
  return (
    <section className="panel" aria-labelledby="invitations-title">
      <h2 id="invitations-title">{t("invitations.title")}</h2>
      {invitations === null ? (
        <p>{t("invitations.unavailable")}</p>
      ) : invitations.length === 0 ? (
        <p>{t("invitations.empty")}</p>
      ) : (
        <ListTable
          caption={t("invitations.title")}
          rows={invitations}
          rowKey={(i) => i.id}
          columns={[
            { header: t("users.email"), cell: (i) => i.email },
            { header: t("invitations.invitedBy"), cell: (i) => i.invitedBy ?? "—" },
            {
              header: t("invitations.expires"),
              cell: (i) => (i.expired ? <span className="badge badge-warning">{t("invitations.expired")}</span> : <Moment iso={i.expiresAt} />),
            },
            {
              header: t("common.actions"),
              cell: (i) => (
                <ActionMenu name={i.email}>
                  <ActionForm intent="resendInvitation" fields={{ invitationId: i.id }}>
                    <button type="submit" className="button button-inline button-secondary">{t("invitations.resend")}</button>
                  </ActionForm>
                  <ConfirmAction intent="revokeInvitation" label={t("invitations.revoke")} question={t("invitations.confirmRevoke", { email: i.email })} fields={{ invitationId: i.id }} danger />
                </ActionMenu>
              ),
            },
          ]}
        />
      )}
    </section>
  );
}
