import { emailText } from "./i18n";
import { ActionButton, EmailLayout, PREVIEW_BRANDING, Paragraph, type EmailBaseProps } from "./layout";

export interface MagicLinkEmailProps extends EmailBaseProps {
  link: string;
  expiresMinutes: number;
}

export function magicLinkSubject({ language, organizationName }: Pick<EmailBaseProps, "language" | "organizationName">): string {
  return emailText(language)("magicLink.subject", { organization: organizationName });
}

/** Sent for a magic-link sign-in request; the link completes the login on its own. */
export default function MagicLinkEmail(props: MagicLinkEmailProps) {
  const { language, organizationName, link, expiresMinutes } = props;
  const t = emailText(language);
  const organization = organizationName;
  return (
    <EmailLayout
      {...props}
      preview={t("magicLink.preview", { organization })}
      heading={t("magicLink.heading", { organization })}
      notes={[t("magicLink.expiry", { count: expiresMinutes }), t("common.ignore")]}
    >
      <Paragraph>{t("magicLink.body", { organization })}</Paragraph>
      <ActionButton href={link} label={t("magicLink.button")} branding={props.branding} language={language} />
    </EmailLayout>
  );
}

MagicLinkEmail.PreviewProps = {
  language: "en",
  branding: PREVIEW_BRANDING,
  organizationName: "Acme",
  link: "https://id.example.com/acme/interaction/abc123/magic-link/callback?token=preview-token",
  expiresMinutes: 15,
} satisfies MagicLinkEmailProps;
