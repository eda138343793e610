import { type AppError, staleEtag } from "../errors";

/**
 * The version a compare-and-set write demands of its row (the entity's `version` column, which
 * every write bumps and the Admin API sends as the ETag).
 * - `ifMatch`: the version the client named with If-Match; undefined when it named none.
 * - `read`: the version the service read before deciding what to write. Given, a write without
 *   If-Match is still conditioned on it, so two concurrent read-modify-writes cannot both land;
 *   left out, a write without If-Match is unconditional.
 */
export interface ExpectedVersion {
  ifMatch: number | undefined;
  read?: number;
}

/** The `version` condition for a write's `where`: If-Match's version, else the one read, else none. */
export function versionGuard(expected: ExpectedVersion): { version?: number } {
  const version = expected.ifMatch ?? expected.read;
  return version === undefined ? {} : { version };
}

/**
 * The one compare-and-set of the services: runs `write` (an updateMany or deleteMany) with the
 * version condition for its `where`; when it touched no row the row moved on (or went), and the
 * write fails with `onMiss` — 409 etag_mismatch unless the caller tells a vanished row apart.
 * Inside the unit of work, a miss rolls back whatever the operation wrote before.
 */
export async function compareAndSet(
  expected: ExpectedVersion,
  write: (guard: { version?: number }) => Promise<{ count: number }>,
  onMiss: () => AppError | Promise<AppError> = staleEtag,
): Promise<void> {
  const { count } = await write(versionGuard(expected));
  if (count !== 1) throw await onMiss();
}

/** For a check before the write (an upload that must not store its bytes when stale): 409 unless the row read is at If-Match's version. */
export function assertVersion(ifMatch: number | undefined, current: number): void {
  if (ifMatch !== undefined && ifMatch !== current) throw staleEtag();
}
