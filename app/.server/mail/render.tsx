/** @jsxRuntime automatic */
/** @jsxImportSource react */
import { render } from "@react-email/components";
import { type ReactElement } from "react";
import EmailOtpEmail, { emailOtpSubject } from "../../../emails/email-otp";
import InvitationEmail, { invitationSubject } from "../../../emails/invitation";
import MagicLinkEmail, { magicLinkSubject } from "../../../emails/magic-link";
import PasswordResetEmail, { passwordResetSubject } from "../../../emails/password-reset";
import { type Language } from "~/i18n/config";
import { type Branding } from "../interaction/branding";

export type EmailTemplate =
  | { kind: "magic-link"; link: string; expiresMinutes: number }
  | { kind: "password-reset"; link: string; expiresMinutes: number }
  | { kind: "invitation"; link: string; expiresDays: number; invitedBy?: string }
  | { kind: "email-otp"; code: string; expiresMinutes: number };

export interface EmailContext {
  language: Language;
  branding: Branding;
  /** Interpolated as {{organization}} in subject and body; the header shows branding.name. */
  organizationName: string;
}

export interface RenderedEmail {
  subject: string;
  html: string;
  text: string;
}

function element(template: EmailTemplate, ctx: EmailContext): { subject: string; email: ReactElement } {
  const base = { language: ctx.language, branding: ctx.branding, organizationName: ctx.organizationName };
  switch (template.kind) {
    case "magic-link":
      return {
        subject: magicLinkSubject(base),
        email: <MagicLinkEmail {...base} link={template.link} expiresMinutes={template.expiresMinutes} />,
      };
    case "password-reset":
      return {
        subject: passwordResetSubject(base),
        email: <PasswordResetEmail {...base} link={template.link} expiresMinutes={template.expiresMinutes} />,
      };
    case "invitation":
      return {
        subject: invitationSubject(base),
        email: <InvitationEmail {...base} link={template.link} expiresDays={template.expiresDays} invitedBy={template.invitedBy} />,
      };
    case "email-otp":
      return {
        subject: emailOtpSubject(base),
        email: <EmailOtpEmail {...base} code={template.code} expiresMinutes={template.expiresMinutes} />,
      };
  }
}

/** Renders one message in the recipient's language: subject, HTML part and a real plain-text part. */
export async function renderEmail(template: EmailTemplate, ctx: EmailContext): Promise<RenderedEmail> {
  const { subject, email } = element(template, ctx);
  const [html, text] = await Promise.all([render(email), render(email, { plainText: true })]);
  return { subject, html, text };
}
