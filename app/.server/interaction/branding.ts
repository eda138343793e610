/**
 * An organization's branding for its login pages, read from the organization record and
 * reduced to values that cannot break out of CSS or point anywhere unexpected.
 */
export interface Branding {
  name: string;
  logoUrl: string | null;
  /** CSS custom properties applied to the page (all prefixed --porta-). */
  cssVariables: Record<string, string>;
}

const COLOR = /^#(?:[0-9a-fA-F]{3}|[0-9a-fA-F]{4}|[0-9a-fA-F]{6}|[0-9a-fA-F]{8})$/;
const CSS_VALUE = /^[#a-zA-Z0-9 .,%()-]{1,64}$/;
const VARIABLE = /^--porta-[a-z0-9-]{1,40}$/;

function safeLogoUrl(value: unknown): string | null {
  if (typeof value !== "string" || value.length > 2048) return null;
  if (value.startsWith("/") && !value.startsWith("//")) return value;
  try {
    return new URL(value).protocol === "https:" ? value : null;
  } catch {
    return null;
  }
}

export function brandingOf(organization: { name: string; branding: unknown }): Branding {
  const raw = (organization.branding && typeof organization.branding === "object" ? organization.branding : {}) as Record<string, unknown>;
  const cssVariables: Record<string, string> = {};
  if (typeof raw.primaryColor === "string" && COLOR.test(raw.primaryColor)) cssVariables["--porta-primary"] = raw.primaryColor;
  if (typeof raw.backgroundColor === "string" && COLOR.test(raw.backgroundColor)) cssVariables["--porta-bg"] = raw.backgroundColor;
  const extra = raw.cssVariables && typeof raw.cssVariables === "object" ? (raw.cssVariables as Record<string, unknown>) : {};
  for (const [name, value] of Object.entries(extra)) {
    if (VARIABLE.test(name) && typeof value === "string" && CSS_VALUE.test(value)) cssVariables[name] = value;
  }
  const name = typeof raw.name === "string" && raw.name.trim() ? raw.name.trim().slice(0, 100) : organization.name;
  return { name, logoUrl: safeLogoUrl(raw.logoUrl), cssVariables };
}
