import { emailText } from "./i18n";
import { ActionButton, EmailLayout, PREVIEW_BRANDING, Paragraph, type EmailBaseProps } from "./layout";

export interface EmailChangeEmailProps extends EmailBaseProps {
  link: string;
  newEmail: string;
  expiresMinutes: number;
}

export function emailChangeSubject({ language, organizationName }: Pick<EmailBaseProps, "language" | "organizationName">): string {
  return emailText(language)("emailChange.subject", { organization: organizationName });
}

/** Sent to the new address of an email change asked for on the account page; the link confirms it. */
export default function EmailChangeEmail(props: EmailChangeEmailProps) {
  const { language, organizationName, link, newEmail, expiresMinutes } = props;
  const t = emailText(language);
  const organization = organizationName;
  return (
    <EmailLayout
      {...props}
      preview={t("emailChange.preview", { organization })}
      heading={t("emailChange.heading")}
      notes={[t("emailChange.expiry", { count: expiresMinutes }), t("common.ignore"), t("emailChange.unchanged")]}
    >
      <Paragraph>{t("emailChange.body", { organization, email: newEmail })}</Paragraph>
      <ActionButton href={link} label={t("emailChange.button")} branding={props.branding} language={language} />
    </EmailLayout>
  );
}

EmailChangeEmail.PreviewProps = {
  language: "en",
  branding: PREVIEW_BRANDING,
  organizationName: "Acme",
  link: "https://id.example.com/acme/account/email?token=preview-token",
  newEmail: "ada@new.example.com",
  expiresMinutes: 60,
} satisfies EmailChangeEmailProps;
