import { createHash, randomBytes, timingSafeEqual } from "node:crypto";
import type { Prisma, SetupLink as LinkRow } from "~/generated/prisma/client";
import type { SetupLink, SetupLinkCreate } from "~/schemas/setup-link";
import type { Context, Db } from "../context";
import { conflict, notFound } from "../errors";
import { listMode, listPage, type ListQuery, type Page } from "../admin/http/pagination";

/**
 * Setup links (decision 089). A service admin creates one for an organization; the customer's IT
 * person opens `/{slug}/setup?token=…` and, from that one browser, configures the organization's
 * SSO connections, SCIM tokens and domains until the link expires, is revoked or is finished.
 *
 * The token is 32 random bytes in base64url, shown once in the creating response; only its
 * SHA-256 is stored, and a presented token is found by that hash (a lookup by the hash of 256
 * random bits leaks nothing through timing). The first open binds the link to the browser: a
 * fresh secret goes into an httpOnly cookie and its SHA-256 into `openedSessionHash`, so the link
 * forwarded or opened again elsewhere no longer works.
 */

export const sha256 = (value: string): string => createHash("sha256").update(value, "utf8").digest("hex");

const sameHash = (a: string, b: string) => a.length === b.length && timingSafeEqual(Buffer.from(a), Buffer.from(b));

/** Where the IT person starts: the organization's setup page with the token (the page drops it at once). */
export const setupLinkUrl = (baseUrl: string, slug: string, token: string) => `${baseUrl}/${slug}/setup?token=${encodeURIComponent(token)}`;

export function setupLinkStatus(row: LinkRow, now = new Date()): SetupLink["status"] {
  if (row.revokedAt) return "revoked";
  if (row.finishedAt) return "finished";
  if (row.expiresAt <= now) return "expired";
  return row.openedAt ? "opened" : "pending";
}

export function toSetupLink(row: LinkRow): SetupLink {
  return {
    id: row.id,
    organizationId: row.organizationId,
    note: row.note,
    status: setupLinkStatus(row),
    expiresAt: row.expiresAt.toISOString(),
    openedAt: row.openedAt?.toISOString() ?? null,
    finishedAt: row.finishedAt?.toISOString() ?? null,
    revokedAt: row.revokedAt?.toISOString() ?? null,
    createdById: row.createdById,
    createdAt: row.createdAt.toISOString(),
  };
}

async function requireLiveOrganization(ctx: Context, id: string) {
  const org = await ctx.db.organization.findUnique({ where: { id }, select: { id: true, slug: true, status: true } });
  if (!org || org.status === "deleted") throw notFound("organization");
  return org;
}

export async function listSetupLinks(ctx: Context, organizationId: string, query: ListQuery): Promise<Page<SetupLink>> {
  await requireLiveOrganization(ctx, organizationId);
  const prisma = ctx.db;
  const where: Prisma.SetupLinkWhereInput = { organizationId };
  const order = query.order ?? "desc";
  const page = await listPage(listMode(query), {
    count: () => prisma.setupLink.count({ where }),
    offset: (skip, take) => prisma.setupLink.findMany({ where, orderBy: [{ createdAt: order }, { id: order }], skip, take }),
    after: (afterId, take) =>
      prisma.setupLink.findMany({ where: { ...where, ...(afterId ? { id: order === "asc" ? { gt: afterId } : { lt: afterId } } : {}) }, orderBy: { id: order }, take }),
  });
  return { ...page, data: page.data.map(toSetupLink) };
}

/**
 * Creates a link. Not for the super-admin organization: its SSO and provisioning decide who
 * administers Porta itself, which no link for a customer's IT person may touch.
 */
export async function createSetupLink(
  ctx: Context<"config">,
  organizationId: string,
  input: SetupLinkCreate,
  createdById: string | null,
): Promise<{ row: LinkRow; url: string }> {
  const org = await requireLiveOrganization(ctx, organizationId);
  if (org.slug === ctx.config.superAdminSlug) {
    throw conflict("protected_organization", "Setup links are not available for the super-admin organization.");
  }
  const token = randomBytes(32).toString("base64url");
  const row = await ctx.db.setupLink.create({
    data: {
      organizationId,
      tokenHash: sha256(token),
      note: input.note ? input.note : null,
      createdById,
      expiresAt: new Date(Date.now() + input.expiresInDays * 86_400_000),
    },
  });
  return { row, url: setupLinkUrl(ctx.config.baseUrl, org.slug, token) };
}

export async function requireSetupLink(ctx: Context, id: string): Promise<LinkRow> {
  const row = await ctx.db.setupLink.findUnique({ where: { id }, include: { organization: { select: { status: true } } } });
  if (!row || row.organization.status === "deleted") throw notFound("setup link");
  const { organization: _org, ...link } = row;
  return link;
}

/** Revoking a revoked link changes nothing; what was configured through it stays. */
export async function revokeSetupLink(ctx: Context, id: string): Promise<{ row: LinkRow; revoked: boolean }> {
  const existing = await requireSetupLink(ctx, id);
  if (existing.revokedAt) return { row: existing, revoked: false };
  return { row: await ctx.db.setupLink.update({ where: { id }, data: { revokedAt: new Date() } }), revoked: true };
}

/** The organization a setup page shows: its name and address, nothing else of it. */
export interface SetupOrganization {
  id: string;
  slug: string;
  name: string;
}

export type LinkWithOrganization = LinkRow & { organization: SetupOrganization & { status: string } };

const withOrganization = { organization: { select: { id: true, slug: true, name: true, status: true } } } as const;

/** Why a link no longer opens the setup pages (the page says so, and whom to ask). */
export type RefusalReason = "opened_elsewhere" | "finished" | "expired" | "revoked";

export type OpenOutcome =
  | { kind: "unknown" }
  | { kind: "refused"; link: LinkWithOrganization; reason: RefusalReason }
  | { kind: "opened"; link: LinkWithOrganization; secret: string; first: boolean };

function refusalOf(row: LinkRow, now: Date): RefusalReason | null {
  const status = setupLinkStatus(row, now);
  return status === "revoked" || status === "finished" || status === "expired" ? status : null;
}

/**
 * Opens the link of `token` on the organization `slug`'s setup page. The first open binds it to
 * this browser (a new secret, whose hash is written only if nobody bound it in between); the
 * browser that holds the secret (`presentedSecret`, from its cookie) opens it again; any other is
 * refused. Unknown tokens and another organization's look alike.
 */
export async function openSetupLink(db: Db, slug: string, token: string, presentedSecret: string | null, now = new Date()): Promise<OpenOutcome> {
  if (token.length < 20 || token.length > 100) return { kind: "unknown" };
  const link = await db.setupLink.findUnique({ where: { tokenHash: sha256(token) }, include: withOrganization });
  if (!link || link.organization.slug !== slug.toLowerCase() || link.organization.status === "deleted") return { kind: "unknown" };
  const refusal = refusalOf(link, now);
  if (refusal) return { kind: "refused", link, reason: refusal };
  if (link.openedSessionHash) {
    if (presentedSecret && sameHash(sha256(presentedSecret), link.openedSessionHash)) return { kind: "opened", link, secret: presentedSecret, first: false };
    return { kind: "refused", link, reason: "opened_elsewhere" };
  }
  const secret = randomBytes(32).toString("base64url");
  const bound = await db.setupLink.updateMany({ where: { id: link.id, openedSessionHash: null }, data: { openedAt: now, openedSessionHash: sha256(secret) } });
  // Another browser bound it between the read and this write.
  if (bound.count === 0) return { kind: "refused", link, reason: "opened_elsewhere" };
  return { kind: "opened", link: { ...link, openedAt: now, openedSessionHash: sha256(secret) }, secret, first: true };
}

export type BrowserLink = { kind: "none" } | { kind: "refused"; link: LinkWithOrganization; reason: RefusalReason } | { kind: "active"; link: LinkWithOrganization };

/** The link this browser opened on `slug` (found by the hash of its cookie's secret), and whether it still works. */
export async function setupLinkOfBrowser(db: Db, slug: string, secret: string | null, now = new Date()): Promise<BrowserLink> {
  if (!secret || secret.length < 20 || secret.length > 100) return { kind: "none" };
  const link = await db.setupLink.findUnique({ where: { openedSessionHash: sha256(secret) }, include: withOrganization });
  if (!link || link.organization.slug !== slug.toLowerCase() || link.organization.status === "deleted") return { kind: "none" };
  const refusal = refusalOf(link, now);
  return refusal ? { kind: "refused", link, reason: refusal } : { kind: "active", link };
}

/** Ends the link: the browser that opened it can no longer change anything. */
export async function finishSetupLink(db: Db, id: string, now = new Date()): Promise<boolean> {
  const done = await db.setupLink.updateMany({ where: { id, finishedAt: null, revokedAt: null }, data: { finishedAt: now } });
  return done.count === 1;
}
