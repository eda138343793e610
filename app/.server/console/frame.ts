import type { AppLoadContext } from "@remix-run/node";
import { getOrganizationBySlug } from "../directory/organizations";
import { brandingOf } from "../interaction/branding";
import { requireConsole } from "./page";

/** The console's frame: the signed-in admin, the CSRF token, the language and the super-admin organization's branding. */
export async function consoleFrame(args: { request: Request; context: AppLoadContext }) {
  const { services } = args.context;
  const console = await requireConsole(args);
  const organization = await getOrganizationBySlug(services.db.prisma, services.cache, services.config.superAdminSlug);
  const branding = organization ? brandingOf(organization) : { name: "Porta", logoUrl: null, cssVariables: {} };
  return { language: console.language, email: console.session.email, csrf: console.csrf, branding };
}
