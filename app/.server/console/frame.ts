import type { AppLoadContext } from "@remix-run/node";
import { AppError } from "../errors";
import { requireAdmin } from "../admin/http/require-admin";
import { getOrganizationBySlug } from "../directory/organizations";
import { brandingOf } from "../branding/pages";
import { requireConsole } from "./page";

/**
 * The console's frame: the signed-in admin and their permissions (to show only the areas they
 * may open), the CSRF token, the language and the super-admin organization's branding.
 */
export async function consoleFrame(args: { request: Request; context: AppLoadContext }) {
  const { services } = args.context;
  const console = await requireConsole(args);
  const organization = await getOrganizationBySlug(services.db.prisma, services.cache, services.config.superAdminSlug);
  const branding = organization ? brandingOf(organization) : { name: "Porta", logoUrl: null, cssVariables: {} };
  // The Admin API's own check of the bearer: the same permissions every operation is held to.
  const bearer = new Request(services.config.baseUrl, { headers: { authorization: `Bearer ${console.session.accessToken}` } });
  // A token refused meanwhile (revoked elsewhere) shows no areas; the page's first Admin API
  // call then starts a new sign-in (requireConsole).
  const admin = await requireAdmin(services, bearer).catch((error: unknown) => {
    if (error instanceof AppError) return null;
    throw error;
  });
  const permissions = admin ? [...admin.permissions].sort() : [];
  return { language: console.language, email: console.session.email, csrf: console.csrf, branding, permissions, release: services.release };
}
