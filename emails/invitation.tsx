import { emailText } from "./i18n";
import { ActionButton, EmailLayout, PREVIEW_BRANDING, Paragraph, type EmailBaseProps } from "./layout";

export interface InvitationEmailProps extends EmailBaseProps {
  link: string;
  expiresDays: number;
  /** Name of the administrator who sent the invitation, when known. */
  invitedBy?: string | undefined;
}

export function invitationSubject({ language, organizationName }: Pick<EmailBaseProps, "language" | "organizationName">): string {
  return emailText(language)("invitation.subject", { organization: organizationName });
}

/** Sent when an administrator invites someone; accepting creates the account. */
export default function InvitationEmail(props: InvitationEmailProps) {
  const { language, organizationName, link, expiresDays, invitedBy } = props;
  const t = emailText(language);
  const organization = organizationName;
  const inviter = invitedBy?.trim();
  return (
    <EmailLayout
      {...props}
      preview={t("invitation.preview", { organization })}
      heading={t("invitation.heading", { organization })}
      notes={[t("invitation.expiry", { count: expiresDays }), t("invitation.ignore")]}
    >
      <Paragraph>{inviter ? t("invitation.bodyInvitedBy", { organization, invitedBy: inviter }) : t("invitation.body", { organization })}</Paragraph>
      <Paragraph>{t("invitation.action")}</Paragraph>
      <ActionButton href={link} label={t("invitation.button")} branding={props.branding} language={language} />
    </EmailLayout>
  );
}

InvitationEmail.PreviewProps = {
  language: "en",
  branding: PREVIEW_BRANDING,
  organizationName: "Acme",
  link: "https://id.example.com/acme/invitation/accept?token=preview-token",
  expiresDays: 7,
  invitedBy: "Ada Lovelace",
} satisfies InvitationEmailProps;
