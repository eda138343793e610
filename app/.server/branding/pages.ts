import type { Organization } from "~/generated/prisma/client";
import { ACCOUNT_CLIENT_ID, accountPageUrl } from "../oidc/storage/account-client";
import { assetPath, readStoredBranding } from "~/schemas/branding";
import { SlugSchema } from "~/schemas/organization";
import { applicationHome } from "../auth/application-home";
import { getClientRecord } from "../directory/clients";
import { getOrganizationById, getOrganizationBySlug } from "../directory/organizations";
import { lookupInteractionOrigin } from "../oidc/storage/adapter";
import type { Context } from "../context";
import type { Branding, FlowEnd } from "~/schemas/branding";

/**
 * What the login pages, the account page and emails show of an organization's branding and of a
 * flow that ended (the shapes are in app/schemas/branding.ts, which emails and components share).
 */

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

const NOTHING_KNOWN: FlowEnd = { branding: null, home: null, clientName: null, defaultLocale: null, signIn: null };

/** What the flow-end lookups read: the organization and client (cached), the interaction's index in the store, the base URL. */
export type FlowEndContext = Context<"cache" | "store" | "config">;

/**
 * The one lookup behind every page about a link or flow whose URL names its organization by slug.
 * The client comes from the caller (a link's stored client), or from the sign-in the URL's
 * interaction uid belonged to when that was the same organization's.
 */
export async function brandingForSlug(ctx: FlowEndContext, slug: string, via: { clientId?: string | null; interactionUid?: string } = {}): Promise<FlowEnd> {
  const parsed = SlugSchema.safeParse(slug);
  if (!parsed.success) return NOTHING_KNOWN;
  const organization = await getOrganizationBySlug(ctx.db, ctx.cache, parsed.data);
  let clientId = via.clientId ?? null;
  if (!clientId && via.interactionUid && organization) {
    const origin = await lookupInteractionOrigin(ctx.store, via.interactionUid);
    if (origin?.organizationId === organization.id) clientId = origin.clientId;
  }
  return flowEndOf(ctx, organization, clientId);
}

/**
 * For /interaction/:uid when the interaction is gone, finished or another browser's: the URL
 * names no organization, but the uid's index outlives the interaction (decision 035).
 */
export async function brandingForInteraction(ctx: FlowEndContext, uid: string): Promise<FlowEnd> {
  if (uid.length === 0 || uid.length > 200) return NOTHING_KNOWN;
  const origin = await lookupInteractionOrigin(ctx.store, uid);
  if (!origin) return NOTHING_KNOWN;
  const organization = await getOrganizationById(ctx.db, ctx.cache, origin.organizationId);
  return flowEndOf(ctx, organization, origin.clientId);
}

async function flowEndOf(ctx: FlowEndContext, organization: Organization | null, clientId: string | null): Promise<FlowEnd> {
  if (!organization || organization.status !== "active") return NOTHING_KNOWN;
  // The account page's sign-in starts again at the account page.
  if (clientId === ACCOUNT_CLIENT_ID) {
    const account = accountPageUrl(ctx.config.baseUrl, organization.slug);
    return { branding: brandingOf(organization), home: account, clientName: null, defaultLocale: organization.defaultLocale, signIn: account };
  }
  const usableId = clientId !== null && clientId.length > 0 && clientId.length <= 200 && !clientId.includes("\0");
  const found = usableId ? await getClientRecord(ctx.db, ctx.cache, clientId) : null;
  const client = found && found.organizationId === organization.id ? found : null;
  const home = applicationHome(client);
  return { branding: brandingOf(organization), home, clientName: client?.name ?? null, defaultLocale: organization.defaultLocale, signIn: accountPageUrl(ctx.config.baseUrl, organization.slug) };
}
