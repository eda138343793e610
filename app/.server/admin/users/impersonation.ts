import type { User as UserRow } from "~/generated/prisma/client";
import type { z } from "zod";
import type { ImpersonateSchema, ImpersonationSchema } from "~/schemas/user";
import type { Context } from "../../context";
import { conflict, validation } from "../../errors";

type ImpersonateInput = z.output<typeof ImpersonateSchema>;
type Impersonation = z.output<typeof ImpersonationSchema>;

/**
 * An administrator acts as a person (decision 053): a time-limited access token for one of the
 * person's organization's clients, whose `act` names the administrator, made by the
 * organization's provider the way a token exchange makes its tokens. The audit entry (with the
 * reason, which the person sees on their account page) is stated here; the operation runs
 * outside a transaction, because the provider stores the token with the process's own client,
 * and the entry is written before the token is answered.
 */
export async function impersonateUser(ctx: Context<"oidc" | "config">, user: UserRow, admin: { id: string; email: string }, input: ImpersonateInput): Promise<Impersonation> {
  if (user.status !== "active") throw conflict("user_inactive", "Only an active user can be impersonated.");
  const organization = await ctx.db.organization.findUniqueOrThrow({ where: { id: user.organizationId }, select: { slug: true } });
  // The super-admin organization's people are the administrators: acting as one would borrow
  // their standing with whatever trusts that organization's tokens.
  if (organization.slug === ctx.config.superAdminSlug) throw conflict("not_impersonable", "People of the super-admin organization cannot be impersonated.");
  const tenant = await ctx.oidc.get(organization.slug);
  if (!tenant) throw conflict("organization_inactive", "The user's organization is not active.");
  const expiresIn = input.minutes * 60;
  const issued = await tenant.issueImpersonationToken({ clientId: input.clientId, accountId: user.id, actorId: admin.id, expiresIn });
  if (!issued) throw validation([{ field: "clientId", message: "must be an active client of the user's organization" }]);
  const expiresAt = new Date(Date.now() + expiresIn * 1000).toISOString();
  ctx.audit({
    eventType: "user.impersonated",
    organizationId: user.organizationId,
    targetType: "user",
    targetId: user.id,
    data: { clientId: input.clientId, reason: input.reason, minutes: input.minutes, expiresAt, adminEmail: admin.email },
  });
  return { accessToken: issued.value, tokenType: "Bearer", expiresIn, expiresAt, clientId: input.clientId, scope: issued.scope };
}
