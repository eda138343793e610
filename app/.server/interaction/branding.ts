import { assetPath, readStoredBranding } from "~/schemas/branding";

/**
 * An organization's branding for its login pages and emails, read from the organization record
 * through the branding schema (app/schemas/branding.ts) and reduced to values that cannot break
 * out of CSS or point anywhere unexpected.
 */
export interface Branding {
  name: string;
  logoUrl: string | null;
  faviconUrl?: string | null;
  footerText?: string | null;
  /** CSS custom properties applied to the page (all prefixed --porta-). */
  cssVariables: Record<string, string>;
}

/** A same-origin path or an https URL; anything else (javascript:, data:, //host) is dropped. */
function safeLogoUrl(value: string | undefined): string | null {
  if (value === undefined) return null;
  if (value.startsWith("/") && !value.startsWith("//") && !value.includes("\\")) return value;
  try {
    return new URL(value).protocol === "https:" ? value : null;
  } catch {
    return null;
  }
}

export function brandingOf(organization: { id: string; name: string; branding: unknown }): Branding {
  const stored = readStoredBranding(organization.branding);
  const cssVariables: Record<string, string> = {};
  if (stored.primaryColor) cssVariables["--porta-primary"] = stored.primaryColor;
  if (stored.backgroundColor) cssVariables["--porta-bg"] = stored.backgroundColor;
  if (stored.textColor) cssVariables["--porta-text"] = stored.textColor;
  return {
    name: stored.displayName ?? stored.name ?? organization.name,
    logoUrl: stored.logo ? assetPath(organization.id, stored.logo) : safeLogoUrl(stored.logoUrl),
    faviconUrl: stored.favicon ? assetPath(organization.id, stored.favicon) : null,
    footerText: stored.footerText ?? null,
    cssVariables,
  };
}
