import { emailText } from "./i18n";
import { ActionButton, EmailLayout, PREVIEW_BRANDING, Paragraph, type EmailBaseProps } from "./layout";

export interface PasswordResetEmailProps extends EmailBaseProps {
  link: string;
  expiresMinutes: number;
}

export function passwordResetSubject({ language, organizationName }: Pick<EmailBaseProps, "language" | "organizationName">): string {
  return emailText(language)("passwordReset.subject", { organization: organizationName });
}

/** Sent for a password-reset request; the link opens the form for a new password. */
export default function PasswordResetEmail(props: PasswordResetEmailProps) {
  const { language, organizationName, link, expiresMinutes } = props;
  const t = emailText(language);
  const organization = organizationName;
  return (
    <EmailLayout
      {...props}
      preview={t("passwordReset.preview", { organization })}
      heading={t("passwordReset.heading")}
      notes={[t("passwordReset.expiry", { count: expiresMinutes }), t("common.ignore"), t("passwordReset.unchanged")]}
    >
      <Paragraph>{t("passwordReset.body", { organization })}</Paragraph>
      <ActionButton href={link} label={t("passwordReset.button")} branding={props.branding} language={language} />
    </EmailLayout>
  );
}

PasswordResetEmail.PreviewProps = {
  language: "en",
  branding: PREVIEW_BRANDING,
  organizationName: "Acme",
  link: "https://id.example.com/interaction/abc123/reset-password?token=preview-token",
  expiresMinutes: 30,
} satisfies PasswordResetEmailProps;
