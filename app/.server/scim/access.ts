import type { ScimToken as TokenRow } from "~/generated/prisma/client";
import type { Context } from "../context";
import { ScimError } from "./errors";
import { findActiveScimToken } from "./tokens";

/**
 * Who may call an organization's SCIM endpoint: the organization must exist and be active (else
 * 404, as on its other protocol routes), and the bearer token must be an active SCIM token of
 * that organization. A missing, unknown, expired, revoked or other organization's token is the
 * same 401, so that the answer tells nothing about tokens elsewhere.
 */
export interface ScimAccess {
  organizationId: string;
  slug: string;
  token: TokenRow;
}

const challenge = (error?: "invalid_token") => ({
  "WWW-Authenticate": error
    ? `Bearer realm="scim", error="${error}"`
    : 'Bearer realm="scim"',
});

export async function requireScimOrganization(
  ctx: Context,
  slug: string
): Promise<{ id: string; slug: string }> {
  const org = await ctx.db.organization.findUnique({
    where: { slug: slug.toLowerCase() },
    select: { id: true, slug: true, status: true },
  });
  if (!org || org.status !== "active")
    throw new ScimError(404, "There is no SCIM endpoint here.");
  return org;
}

export async function requireScimAccess(
  ctx: Context,
  slug: string,
  bearer: string | undefined
): Promise<ScimAccess> {
  const org = await requireScimOrganization(ctx, slug);
  if (bearer === undefined)
    throw new ScimError(
      401,
      "A SCIM token of this organization is required (Authorization: Bearer).",
      undefined,
      challenge()
    );
  const token = await findActiveScimToken(ctx.db, org.id, bearer);
  if (!token)
    throw new ScimError(
      401,
      "The token is not an active SCIM token of this organization.",
      undefined,
      challenge("invalid_token")
    );
  return { organizationId: org.id, slug: org.slug, token };
}
