/** @jsxRuntime automatic */
/** @jsxImportSource react */
import { render } from "@react-email/components";
import { type ReactElement } from "react";
import EmailChangeEmail, { emailChangeSubject } from "../../../emails/email-change";
import EmailChangeNoticeEmail, { emailChangeNoticeSubject } from "../../../emails/email-change-notice";
import EmailOtpEmail, { emailOtpSubject } from "../../../emails/email-otp";
import InvitationEmail, { invitationSubject } from "../../../emails/invitation";
import MagicLinkEmail, { magicLinkSubject } from "../../../emails/magic-link";
import PasswordResetEmail, { passwordResetSubject } from "../../../emails/password-reset";
import type { EmailContext, EmailTemplate, RenderedEmail } from "./render";

/**
 * The mail templates and their renderer. Loaded by render.ts on the first message only: the
 * react-email components pull in a syntax highlighter and more that an idle process never needs.
 */

function element(template: EmailTemplate, ctx: EmailContext): { subject: string; email: ReactElement } {
  const base = { language: ctx.language, branding: ctx.branding, organizationName: ctx.organizationName, accountUrl: ctx.accountUrl };
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
    case "email-change":
      return {
        subject: emailChangeSubject(base),
        email: <EmailChangeEmail {...base} link={template.link} newEmail={template.newEmail} expiresMinutes={template.expiresMinutes} />,
      };
    case "email-change-notice":
      return {
        subject: emailChangeNoticeSubject(base),
        email: <EmailChangeNoticeEmail {...base} newEmail={template.newEmail} />,
      };
  }
}

export async function renderTemplate(template: EmailTemplate, ctx: EmailContext): Promise<RenderedEmail> {
  const { subject, email } = element(template, ctx);
  const [html, text] = await Promise.all([render(email), render(email, { plainText: true })]);
  return { subject, html, text };
}
