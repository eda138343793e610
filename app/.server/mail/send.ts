import type { Organization } from "~/generated/prisma/client";
import { isSupportedLanguage, FALLBACK_LANGUAGE } from "~/i18n/config";
import { brandingOf } from "../branding/pages";
import type { Mailer } from "./mailer";
import { renderEmail, type EmailTemplate } from "./render";

/** Renders one of Porta's messages in the recipient's language with the organization's branding, and sends it. */
export async function sendBrandedEmail(
  mailer: Mailer,
  input: { to: string; organization: Organization; language: string; template: EmailTemplate; accountUrl?: string },
): Promise<{ messageId: string }> {
  const language = isSupportedLanguage(input.language) ? input.language : FALLBACK_LANGUAGE;
  const rendered = await renderEmail(input.template, {
    language,
    branding: brandingOf(input.organization),
    organizationName: input.organization.name,
    accountUrl: input.accountUrl,
  });
  return mailer.send({ to: input.to, ...rendered });
}
