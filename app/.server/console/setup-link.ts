import type { AppLoadContext } from "@remix-run/node";
import { inTransaction, type Actor } from "../context";
import { unauthorized } from "../errors";
import { cookieHeader, readCookie } from "../http/cookies";
import type { Authenticate } from "../admin/http/caller";
import { setupLinkCaller } from "../admin/http/setup-link-caller";
import type { OperationId, OperationOutput } from "../admin/http/operation-table";
import { finishSetupLink, openSetupLink, setupLinkOfBrowser, sha256, type LinkWithOrganization, type RefusalReason, type SetupOrganization } from "../setup-links/service";
import { callAdmin, type AdminInput, type AdminResult } from "./gateway";

/**
 * The setup pages' door (decision 089): `/{slug}/setup` for a customer's IT person holding a
 * setup link. The token arrives once in the query; the first open binds the link to the browser
 * with a cookie of its own and the page redirects to an address without the token (the access
 * log never writes queries, and Referrer-Policy same-origin keeps it from other sites). Every
 * change runs as an Admin API operation through `callAdmin` with the link's caller, so validation,
 * the organization scope and the audit entry (actor `setup_link`) are the Admin API's own.
 */
export const SETUP_COOKIE = "porta_setup";
/** As long as the longest link lives: the link's own expiry is what ends it. */
const COOKIE_MAX_AGE_SECONDS = 31 * 24 * 60 * 60;

export const setupPath = (slug: string) => `/${slug.toLowerCase()}/setup`;

const setupCookie = (context: AppLoadContext, slug: string, value: string, maxAge: number) =>
  cookieHeader(context.services.config.baseUrl, SETUP_COOKIE, value, { path: setupPath(slug), maxAge });

const actorOf = (context: AppLoadContext, linkId: string | null): Actor => ({
  type: linkId ? "setup_link" : "anonymous",
  id: linkId,
  ip: context.req.ip ?? null,
  requestId: context.requestId,
});

/** How a refused link names itself on the page: whom to ask, and why. */
export interface Refusal {
  reason: RefusalReason;
  organization: SetupOrganization;
}

const refusalOf = (link: LinkWithOrganization, reason: RefusalReason): Refusal => ({
  reason,
  organization: { id: link.organization.id, slug: link.organization.slug, name: link.organization.name },
});

export type OpenResult = { kind: "unknown" } | { kind: "refused"; refusal: Refusal } | { kind: "opened"; location: string; cookie: string };

/**
 * Opens the link of the token in the address. The first open is audited `setup_link.opened`;
 * a refusal (another browser, or a link finished, expired or revoked) `setup_link.refused`.
 */
export async function openLink(context: AppLoadContext, request: Request, slug: string, token: string): Promise<OpenResult> {
  const { services } = context;
  // The link is found first for the actor its audit entry names; the bind is decided in the write.
  const found = await services.db.prisma.setupLink.findUnique({ where: { tokenHash: sha256(token) }, select: { id: true } });
  const presented = readCookie(request, SETUP_COOKIE) ?? null;
  const outcome = await inTransaction(services, actorOf(context, found?.id ?? null), async (ctx) => {
    const opened = await openSetupLink(ctx.db, slug, token, presented);
    if (opened.kind === "opened" && opened.first) {
      ctx.audit({ eventType: "setup_link.opened", organizationId: opened.link.organizationId, targetType: "setup_link", targetId: opened.link.id, data: {} });
    } else if (opened.kind === "refused") {
      ctx.audit({ eventType: "setup_link.refused", organizationId: opened.link.organizationId, targetType: "setup_link", targetId: opened.link.id, data: { reason: opened.reason } });
    }
    return opened;
  });
  if (outcome.kind === "unknown") return { kind: "unknown" };
  if (outcome.kind === "refused") return { kind: "refused", refusal: refusalOf(outcome.link, outcome.reason) };
  return { kind: "opened", location: setupPath(outcome.link.organization.slug), cookie: setupCookie(context, outcome.link.organization.slug, outcome.secret, COOKIE_MAX_AGE_SECONDS) };
}

/** What the setup pages work with once the browser's link is known to work. */
export interface SetupSession {
  linkId: string;
  note: string | null;
  expiresAt: string;
  organization: SetupOrganization;
  csrf: string;
  /** Runs an Admin API operation as the link: the caller may run the setup operations only, on its organization only. */
  admin<Id extends OperationId>(operationId: Id, input?: AdminInput<Id>): Promise<AdminResult<OperationOutput<Id>>>;
}

export type CurrentSetup = { kind: "none" } | { kind: "refused"; refusal: Refusal } | { kind: "active"; setup: SetupSession };

export const setupCsrfSubject = (linkId: string) => `setup-link:${linkId}`;

/**
 * The link this browser opened on `slug`. The caller re-reads the link for every operation, so a
 * link revoked or finished while a page was open refuses the next change.
 */
export async function currentSetup(context: AppLoadContext, request: Request, slug: string): Promise<CurrentSetup> {
  const { services } = context;
  const secret = readCookie(request, SETUP_COOKIE) ?? null;
  const found = await setupLinkOfBrowser(services.db.prisma, slug, secret);
  if (found.kind === "none") return { kind: "none" };
  if (found.kind === "refused") return { kind: "refused", refusal: refusalOf(found.link, found.reason) };
  const { link } = found;
  const authenticate: Authenticate = async (source) => {
    const again = await setupLinkOfBrowser(source.db.prisma, slug, secret);
    if (again.kind !== "active" || again.link.id !== link.id) throw unauthorized();
    return setupLinkCaller(again.link);
  };
  return {
    kind: "active",
    setup: {
      linkId: link.id,
      note: link.note,
      expiresAt: link.expiresAt.toISOString(),
      organization: { id: link.organization.id, slug: link.organization.slug, name: link.organization.name },
      csrf: services.csrf.tokenFor(setupCsrfSubject(link.id)),
      // No bearer token: the link's own authentication stands in for the Admin API's.
      admin: (operationId, input) => callAdmin(context, "", operationId, input, authenticate),
    },
  };
}

/** "Finish setup": the link ends (audited `setup_link.finished`) and the browser's cookie goes. */
export async function finishSetup(context: AppLoadContext, setup: SetupSession): Promise<{ cookie: string }> {
  await inTransaction(context.services, actorOf(context, setup.linkId), async (ctx) => {
    if (await finishSetupLink(ctx.db, setup.linkId)) {
      ctx.audit({ eventType: "setup_link.finished", organizationId: setup.organization.id, targetType: "setup_link", targetId: setup.linkId, data: {} });
    }
  });
  return { cookie: setupCookie(context, setup.organization.slug, "", 0) };
}
