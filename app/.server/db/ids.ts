import { randomBytes } from "node:crypto";

/**
 * A UUIDv7 (RFC 9562), as Prisma's `@default(uuid(7))` makes them: time-ordered, so an id chosen
 * before its row is written (to name it in the same transaction's audit entry) still sorts by
 * creation time like every other id, and cursor paging keeps creation order.
 */
let lastMs = 0;
let sequence = 0;

export function newUuidV7(): string {
  const bytes = randomBytes(16);
  // Ids made in one millisecond still sort in the order they were made (RFC 9562 §6.2, method 1:
  // a 12-bit counter in rand_a, started at a random value with headroom, carried into the next ms).
  let ms = Date.now();
  if (ms <= lastMs) {
    sequence += 1;
    if (sequence > 0xfff) {
      lastMs += 1;
      sequence = 0;
    }
    ms = lastMs;
  } else {
    lastMs = ms;
    sequence = bytes.readUInt16BE(6) & 0x7ff;
  }
  const time = BigInt(ms);
  for (let i = 0; i < 6; i++) bytes[i] = Number((time >> BigInt(8 * (5 - i))) & 0xffn);
  bytes[6] = 0x70 | (sequence >> 8);
  bytes[7] = sequence & 0xff;
  bytes[8] = (bytes[8]! & 0x3f) | 0x80;
  const hex = bytes.toString("hex");
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}
