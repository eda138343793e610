import type { FirstSteps } from "~/schemas/stats";
import type { Context } from "../../context";

/**
 * The dashboard's checklist to a first app: whether, outside the super-admin organization, an
 * organization, an application, a client and a user exist and someone has signed in. Each is one
 * existence query (no counting), so the dashboard stays cheap at a million users.
 */
export async function firstSteps(ctx: Context<"config">): Promise<FirstSteps> {
  const own = { status: { not: "deleted" }, slug: { not: ctx.config.superAdminSlug } };
  const superAdmin = await ctx.db.organization.findUnique({ where: { slug: ctx.config.superAdminSlug }, select: { id: true } });
  const [organization, application, client, user, signIn] = await Promise.all([
    ctx.db.organization.findFirst({ where: own, orderBy: { createdAt: "desc" }, select: { id: true } }),
    ctx.db.application.findFirst({ where: { organization: own }, select: { id: true } }),
    ctx.db.client.findFirst({ where: { organization: own }, select: { id: true } }),
    ctx.db.user.findFirst({ where: { organization: own }, select: { id: true } }),
    ctx.db.auditEntry.findFirst({
      where: { eventType: "auth.login.success", organizationId: superAdmin ? { not: superAdmin.id } : { not: null } },
      select: { id: true },
    }),
  ]);
  return {
    organizationId: organization?.id ?? null,
    application: application !== null,
    client: client !== null,
    user: user !== null,
    signIn: signIn !== null,
  };
}
