import type { User } from "~/generated/prisma/client";
import type { ReadThroughCache } from "../cache/read-through";
import type { Db } from "../context";

const TTL_SECONDS = 30;
const key = (id: string) => `user:${id}`;

/** A user as cached: never the password hash nor an imported password's parameters, which stay in PostgreSQL only. */
export type CachedUser = Omit<User, "passwordHash" | "legacyPassword">;

export function getUserById(db: Db, cache: ReadThroughCache, id: string): Promise<CachedUser | null> {
  return cache.getOrLoad(key(id), TTL_SECONDS, () => db.user.findUnique({ where: { id }, omit: { passwordHash: true, legacyPassword: true } }));
}

export function invalidateUser(cache: ReadThroughCache, id: string) {
  return cache.invalidate(key(id));
}
