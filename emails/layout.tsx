import { Body, Button, Container, Head, Heading, Hr, Html, Img, Link, Preview, Section, Text } from "@react-email/components";
import { type CSSProperties, type ReactNode } from "react";
import { type Language } from "../app/i18n/config";
import type { Branding } from "../app/schemas/branding";
import { emailText } from "./i18n";

/** What every template receives besides its own values. */
export interface EmailBaseProps {
  language: Language;
  branding: Branding;
  /** Interpolated as {{organization}} in the text. */
  organizationName: string;
  /** The recipient's account page, for mails to people who have an account (decision 038). */
  accountUrl?: string | undefined;
}

export const DEFAULT_PRIMARY = "#3b5bdb";
const HEX_COLOR = /^#(?:[0-9a-fA-F]{3}|[0-9a-fA-F]{6})$/;

/** The primary colour of the branding when it is a plain hex colour mail clients understand. */
export function primaryColor(branding: Branding): string {
  const value = branding.cssVariables["--porta-primary"];
  return value && HEX_COLOR.test(value) ? value : DEFAULT_PRIMARY;
}

/** Black or white, whichever reads better on the given hex colour (WCAG relative luminance). */
export function textColorOn(hex: string): string {
  const digits = hex.length === 4 ? [...hex.slice(1)].map((d) => d + d) : [hex.slice(1, 3), hex.slice(3, 5), hex.slice(5, 7)];
  const [r, g, b] = digits.map((d) => {
    const c = parseInt(d, 16) / 255;
    return c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4;
  }) as [number, number, number];
  const luminance = 0.2126 * r + 0.7152 * g + 0.0722 * b;
  return luminance > 0.179 ? "#111111" : "#ffffff";
}

/** The primary colour for text on white, or the default text colour when the primary is too light to read. */
export function accentOnWhite(branding: Branding): string {
  const primary = primaryColor(branding);
  return textColorOn(primary) === "#ffffff" ? primary : "#1b1e24";
}

/** Only an absolute https logo can be shown by a mail client (relative paths have no host there). */
export function emailLogoUrl(branding: Branding): string | null {
  if (!branding.logoUrl) return null;
  try {
    return new URL(branding.logoUrl).protocol === "https:" ? branding.logoUrl : null;
  } catch {
    return null;
  }
}

const styles = {
  body: { backgroundColor: "#f4f5f8", fontFamily: "-apple-system, 'Segoe UI', Roboto, Helvetica, Arial, sans-serif", margin: 0, padding: "24px 0" },
  container: { backgroundColor: "#ffffff", borderRadius: "10px", maxWidth: "480px", margin: "0 auto", padding: "32px" },
  logo: { maxHeight: "48px", maxWidth: "200px", marginBottom: "16px" },
  brandName: { fontSize: "16px", fontWeight: 600, margin: "0 0 16px" },
  heading: { color: "#1b1e24", fontSize: "22px", lineHeight: "30px", margin: "0 0 16px" },
  text: { color: "#1b1e24", fontSize: "15px", lineHeight: "24px", margin: "0 0 16px" },
  muted: { color: "#5c6370", fontSize: "13px", lineHeight: "20px", margin: "0 0 12px" },
  hr: { borderColor: "#e3e5ea", margin: "24px 0 16px" },
} satisfies Record<string, CSSProperties>;

/** The shared frame: branding header, heading, content, then the footer lines. */
export function EmailLayout({
  language,
  branding,
  organizationName,
  preview,
  heading,
  children,
  notes,
  accountUrl,
}: EmailBaseProps & { preview: string; heading: string; children: ReactNode; notes: string[] }) {
  const t = emailText(language);
  const logo = emailLogoUrl(branding);
  const accent = accentOnWhite(branding);
  return (
    <Html lang={language} dir="ltr">
      <Head />
      <Preview>{preview}</Preview>
      <Body style={styles.body}>
        <Container style={styles.container}>
          <Section>
            {logo ? (
              <Img src={logo} alt={branding.name} style={styles.logo} />
            ) : (
              <Text style={{ ...styles.brandName, color: accent }}>{branding.name}</Text>
            )}
          </Section>
          <Heading as="h1" style={styles.heading}>
            {heading}
          </Heading>
          {children}
          <Hr style={styles.hr} />
          {notes.map((note) => (
            <Text key={note} style={styles.muted}>
              {note}
            </Text>
          ))}
          {accountUrl ? <Text style={styles.muted}>{t("common.account", { url: accountUrl })}</Text> : null}
          <Text style={styles.muted}>{t("common.footer", { organization: organizationName })}</Text>
        </Container>
      </Body>
    </Html>
  );
}

/** A body paragraph. */
export function Paragraph({ children }: { children: ReactNode }) {
  return <Text style={styles.text}>{children}</Text>;
}

/** The call to action, with the raw address beneath it for clients that break buttons. */
export function ActionButton({ href, label, branding, language }: { href: string; label: string; branding: Branding; language: Language }) {
  const primary = primaryColor(branding);
  const t = emailText(language);
  return (
    <Section style={{ margin: "8px 0 24px" }}>
      <Button
        href={href}
        style={{
          backgroundColor: primary,
          color: textColorOn(primary),
          borderRadius: "6px",
          fontSize: "15px",
          fontWeight: 600,
          padding: "12px 20px",
          textDecoration: "none",
        }}
      >
        {label}
      </Button>
      {/* The plain-text part already shows the address next to the button label. */}
      <Text data-skip-in-text style={{ ...styles.muted, marginTop: "20px" }}>
        {t("common.linkFallback")}
      </Text>
      <Text data-skip-in-text style={{ ...styles.muted, wordBreak: "break-all" }}>
        <Link href={href} style={{ color: accentOnWhite(branding) }}>
          {href}
        </Link>
      </Text>
    </Section>
  );
}

/** A one-time code, large and spaced, easy to read and to copy. */
export function CodeBlock({ code }: { code: string }) {
  return (
    <Section style={{ backgroundColor: "#f4f5f8", borderRadius: "8px", margin: "8px 0 24px", padding: "16px", textAlign: "center" }}>
      <Text style={{ color: "#1b1e24", fontFamily: "'SFMono-Regular', Menlo, Consolas, monospace", fontSize: "32px", fontWeight: 700, letterSpacing: "8px", lineHeight: "40px", margin: 0 }}>
        {code}
      </Text>
    </Section>
  );
}

/** Sample values for the react-email preview server. */
export const PREVIEW_BRANDING: Branding = { name: "Acme", logoUrl: null, cssVariables: { "--porta-primary": "#0f766e" } };
