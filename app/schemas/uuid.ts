import { z } from "zod";

/** The one UUID rule: ids in paths, bodies, cursors and token subjects, with one message. */
export const UUID_MESSAGE = "must be a UUID";
export const UuidSchema = z.uuid({ message: UUID_MESSAGE });

export function isUuid(value: string): boolean {
  return UuidSchema.safeParse(value).success;
}
