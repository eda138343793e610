import { emailText } from "./i18n";
import { CodeBlock, EmailLayout, PREVIEW_BRANDING, Paragraph, type EmailBaseProps } from "./layout";

export interface EmailOtpEmailProps extends EmailBaseProps {
  code: string;
  expiresMinutes: number;
}

export function emailOtpSubject({ language, organizationName }: Pick<EmailBaseProps, "language" | "organizationName">): string {
  return emailText(language)("emailOtp.subject", { organization: organizationName });
}

/** Sent after a password login when the second factor is an email code. */
export default function EmailOtpEmail(props: EmailOtpEmailProps) {
  const { language, organizationName, code, expiresMinutes } = props;
  const t = emailText(language);
  const organization = organizationName;
  return (
    <EmailLayout
      {...props}
      preview={t("emailOtp.preview", { organization })}
      heading={t("emailOtp.heading")}
      notes={[t("emailOtp.expiry", { count: expiresMinutes }), t("emailOtp.neverShare", { organization }), t("common.ignore")]}
    >
      <Paragraph>{t("emailOtp.body", { organization })}</Paragraph>
      <CodeBlock code={code} />
    </EmailLayout>
  );
}

EmailOtpEmail.PreviewProps = {
  language: "en",
  branding: PREVIEW_BRANDING,
  organizationName: "Acme",
  code: "482913",
  expiresMinutes: 10,
} satisfies EmailOtpEmailProps;
