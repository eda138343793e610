import type { Organization } from "~/generated/prisma/client";
import type { ReadThroughCache } from "../cache/read-through";
import type { Db } from "../context";

/** Cached organization lookups: the hot path of every protocol request. */
const TTL_SECONDS = 60;

const bySlugKey = (slug: string) => `org:slug:${slug.toLowerCase()}`;
const byIdKey = (id: string) => `org:id:${id}`;

export function getOrganizationBySlug(db: Db, cache: ReadThroughCache, slug: string): Promise<Organization | null> {
  const normalized = slug.toLowerCase();
  return cache.getOrLoad(bySlugKey(normalized), TTL_SECONDS, () => db.organization.findUnique({ where: { slug: normalized } }));
}

export function getOrganizationById(db: Db, cache: ReadThroughCache, id: string): Promise<Organization | null> {
  return cache.getOrLoad(byIdKey(id), TTL_SECONDS, () => db.organization.findUnique({ where: { id } }));
}

/** Writers call this after commit, with the slug before and after a rename. */
export function invalidateOrganization(cache: ReadThroughCache, org: { id: string; slug: string }, previousSlug?: string) {
  const keys = [byIdKey(org.id), bySlugKey(org.slug)];
  if (previousSlug) keys.push(bySlugKey(previousSlug));
  return cache.invalidate(...keys);
}
