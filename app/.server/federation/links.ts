import type { FederatedIdentity } from "~/schemas/identity-provider";
import type { Db } from "../context";

/**
 * A user's links to upstream identity providers (decision 046): listed and removed by
 * administrators and by the person on the account page. Removing a link does not touch the
 * account; the upstream account then signs in as this user again only through a verified email.
 */
const linkSelect = {
  id: true,
  organizationId: true,
  userId: true,
  providerId: true,
  subject: true,
  email: true,
  createdAt: true,
  lastUsedAt: true,
  provider: { select: { name: true } },
} as const;

type LinkRow = { id: string; organizationId: string; userId: string; providerId: string; subject: string; email: string | null; createdAt: Date; lastUsedAt: Date | null; provider: { name: string } };

const toLink = (row: LinkRow): FederatedIdentity => ({
  id: row.id,
  userId: row.userId,
  providerId: row.providerId,
  providerName: row.provider.name,
  subject: row.subject,
  email: row.email,
  createdAt: row.createdAt.toISOString(),
  lastUsedAt: row.lastUsedAt?.toISOString() ?? null,
});

export async function listUserLinks(db: Db, userId: string): Promise<FederatedIdentity[]> {
  const rows = await db.federatedIdentity.findMany({ where: { userId }, select: linkSelect, orderBy: [{ createdAt: "asc" }, { id: "asc" }] });
  return rows.map(toLink);
}

/** Removes one of the user's links; null when the user has no such link. */
export async function deleteUserLink(db: Db, userId: string, linkId: string): Promise<{ organizationId: string; link: FederatedIdentity } | null> {
  const row = await db.federatedIdentity.findFirst({ where: { id: linkId, userId }, select: linkSelect });
  if (!row) return null;
  await db.federatedIdentity.delete({ where: { id: row.id } });
  return { organizationId: row.organizationId, link: toLink(row) };
}
