import { type Language } from "~/i18n/config";
import type { Branding } from "~/schemas/branding";

export type EmailTemplate =
  | { kind: "magic-link"; link: string; expiresMinutes: number }
  | { kind: "password-reset"; link: string; expiresMinutes: number }
  | { kind: "invitation"; link: string; expiresDays: number; invitedBy?: string }
  | { kind: "email-otp"; code: string; expiresMinutes: number }
  | { kind: "email-change"; link: string; newEmail: string; expiresMinutes: number }
  | { kind: "email-change-notice"; newEmail: string };

export interface EmailContext {
  language: Language;
  branding: Branding;
  /** Interpolated as {{organization}} in subject and body; the header shows branding.name. */
  organizationName: string;
  /** The recipient's account page, named in the footer. */
  accountUrl?: string | undefined;
}

export interface RenderedEmail {
  subject: string;
  html: string;
  text: string;
}

/** Renders one message in the recipient's language: subject, HTML part and a real plain-text part. */
export async function renderEmail(template: EmailTemplate, ctx: EmailContext): Promise<RenderedEmail> {
  const { renderTemplate } = await import("./templates");
  return renderTemplate(template, ctx);
}
