import { emailText } from "./i18n";
import { EmailLayout, PREVIEW_BRANDING, Paragraph, type EmailBaseProps } from "./layout";

export interface EmailChangeNoticeEmailProps extends EmailBaseProps {
  newEmail: string;
}

export function emailChangeNoticeSubject({ language, organizationName }: Pick<EmailBaseProps, "language" | "organizationName">): string {
  return emailText(language)("emailChangeNotice.subject", { organization: organizationName });
}

/**
 * Sent to the current address when a change to another one is asked for: the owner of the old
 * address hears of it before anything changes, and can act (the account page, a new password).
 */
export default function EmailChangeNoticeEmail(props: EmailChangeNoticeEmailProps) {
  const { language, organizationName, newEmail } = props;
  const t = emailText(language);
  const organization = organizationName;
  return (
    <EmailLayout {...props} preview={t("emailChangeNotice.preview", { organization })} heading={t("emailChangeNotice.heading")} notes={[t("emailChangeNotice.notYou")]}>
      <Paragraph>{t("emailChangeNotice.body", { organization, email: newEmail })}</Paragraph>
    </EmailLayout>
  );
}

EmailChangeNoticeEmail.PreviewProps = {
  language: "en",
  branding: PREVIEW_BRANDING,
  organizationName: "Acme",
  newEmail: "ada@new.example.com",
} satisfies EmailChangeNoticeEmailProps;
