import type { Prisma } from "~/generated/prisma/client";
import { isUuid } from "~/schemas/uuid";
import type { Db } from "../../context";

/**
 * The people and things an audit filter names (decision 039): an organization by name or slug,
 * an actor or a target by email or name. `matchSubjects` takes the text as a whole (any case)
 * and returns every match, for the filter itself; `searchSubjects` takes a part of it, for
 * suggestions while typing.
 */
export type SubjectRole = "organization" | "actor" | "target";
export const SUBJECT_TYPES = ["organization", "user", "client", "application", "role", "identity_provider"] as const;
export type SubjectType = (typeof SUBJECT_TYPES)[number];

export interface Subject {
  type: SubjectType;
  id: string;
  /** The email of a user, the name of anything else. */
  name: string;
  /** A second line: an organization's slug, a user's full name, the thing's organization. */
  detail: string | null;
  organizationId: string | null;
}

/** What each role may name: an actor is a person or a client; a target anything with a page. */
const TYPES: Record<SubjectRole, SubjectType[]> = {
  organization: ["organization"],
  actor: ["user", "client"],
  target: ["user", "client", "organization", "application", "role", "identity_provider"],
};

type Match = "exact" | "part";

const fullName = (u: { givenName: string | null; familyName: string | null }) => [u.givenName, u.familyName].filter(Boolean).join(" ") || null;

async function find(db: Db, type: SubjectType, q: string, match: Match, organizationId: string | undefined, take: number): Promise<Subject[]> {
  const str = (field: string): Record<string, Prisma.StringFilter> =>
    match === "exact" ? { [field]: { equals: q, mode: "insensitive" } } : { [field]: { contains: q, mode: "insensitive" } };
  const inOrg = organizationId ? { organizationId } : {};
  const byId = isUuid(q) ? [{ id: q }] : [];
  switch (type) {
    case "organization": {
      const rows = await db.organization.findMany({
        where: { OR: [str("name"), match === "exact" ? { slug: q.toLowerCase() } : str("slug"), ...byId], ...(organizationId ? { id: organizationId } : {}) },
        select: { id: true, name: true, slug: true },
        orderBy: { name: "asc" },
        take,
      });
      return rows.map((o) => ({ type, id: o.id, name: o.name, detail: o.slug, organizationId: o.id }));
    }
    case "user": {
      const names = match === "part" ? [str("givenName"), str("familyName")] : [];
      const rows = await db.user.findMany({
        where: { ...inOrg, OR: [match === "exact" ? { email: q } : str("email"), ...names, ...byId] },
        select: { id: true, email: true, givenName: true, familyName: true, organizationId: true, organization: { select: { slug: true } } },
        orderBy: { email: "asc" },
        take,
      });
      return rows.map((u) => ({ type, id: u.id, name: u.email, detail: [fullName(u), u.organization.slug].filter(Boolean).join(" · "), organizationId: u.organizationId }));
    }
    case "client": {
      const rows = await db.client.findMany({
        where: { ...inOrg, OR: [str("name"), { id: q }] },
        select: { id: true, name: true, organizationId: true, organization: { select: { slug: true } } },
        orderBy: { name: "asc" },
        take,
      });
      return rows.map((c) => ({ type, id: c.id, name: c.name, detail: c.organization.slug, organizationId: c.organizationId }));
    }
    case "application": {
      const rows = await db.application.findMany({
        where: { ...inOrg, OR: [str("name"), ...byId] },
        select: { id: true, name: true, organizationId: true, organization: { select: { slug: true } } },
        orderBy: { name: "asc" },
        take,
      });
      return rows.map((a) => ({ type, id: a.id, name: a.name, detail: a.organization.slug, organizationId: a.organizationId }));
    }
    case "role": {
      const rows = await db.role.findMany({
        where: { ...inOrg, OR: [str("name"), ...byId] },
        select: { id: true, name: true, organizationId: true, organization: { select: { slug: true } } },
        orderBy: { name: "asc" },
        take,
      });
      return rows.map((r) => ({ type, id: r.id, name: r.name, detail: r.organization.slug, organizationId: r.organizationId }));
    }
    case "identity_provider": {
      const rows = await db.identityProvider.findMany({
        where: { ...inOrg, OR: [str("name"), ...byId] },
        select: { id: true, name: true, organizationId: true, organization: { select: { slug: true } } },
        orderBy: { name: "asc" },
        take,
      });
      return rows.map((p) => ({ type, id: p.id, name: p.name, detail: p.organization.slug, organizationId: p.organizationId }));
    }
  }
}

/** At most this many of each type are taken for a filter: a name shared more widely is not a name. */
export const MAX_MATCHES = 100;

/** Everything the text names exactly (any case), for a filter. */
export async function matchSubjects(db: Db, role: SubjectRole, q: string, organizationId?: string): Promise<Subject[]> {
  const found = await Promise.all(TYPES[role].map((type) => find(db, type, q, "exact", organizationId, MAX_MATCHES)));
  return found.flat();
}

/** What the text is part of, for suggestions: a few of each type. */
export async function searchSubjects(db: Db, role: SubjectRole, q: string, organizationId: string | undefined, limit: number): Promise<Subject[]> {
  const found = await Promise.all(TYPES[role].map((type) => find(db, type, q, "part", organizationId, limit)));
  return found.flat().slice(0, limit);
}
