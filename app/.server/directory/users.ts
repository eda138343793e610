import type { User } from "~/generated/prisma/client";
import type { ReadThroughCache } from "../cache/read-through";
import type { Db } from "../context";

const TTL_SECONDS = 30;
const key = (id: string) => `user:${id}`;

/** A user as cached: never the password hash, which stays in PostgreSQL only. */
export type CachedUser = Omit<User, "passwordHash">;

export function getUserById(db: Db, cache: ReadThroughCache, id: string): Promise<CachedUser | null> {
  return cache.getOrLoad(key(id), TTL_SECONDS, () => db.user.findUnique({ where: { id }, omit: { passwordHash: true } }));
}

export function invalidateUser(cache: ReadThroughCache, id: string) {
  return cache.invalidate(key(id));
}
