import { randomBytes } from "node:crypto";

/**
 * A UUIDv7 (RFC 9562), as Prisma's `@default(uuid(7))` makes them: time-ordered, so an id chosen
 * before its row is written (to name it in the same transaction's audit entry) still sorts by
 * creation time like every other id, and cursor paging keeps creation order.
 */
export function newUuidV7(): string {
  const bytes = randomBytes(16);
  const ms = BigInt(Date.now());
  for (let i = 0; i < 6; i++) bytes[i] = Number((ms >> BigInt(8 * (5 - i))) & 0xffn);
  bytes[6] = (bytes[6]! & 0x0f) | 0x70;
  bytes[8] = (bytes[8]! & 0x3f) | 0x80;
  const hex = bytes.toString("hex");
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}
