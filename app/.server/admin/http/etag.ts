import { badRequest } from "../../errors";

/** Strong ETags from the entity's `version` column: `"v<version>"`. */
export const etagOf = (version: number) => `"v${version}"`;

const ETAG = /^\s*(?:W\/)?"v(\d{1,10})"\s*$/;

/** The version an ETag Porta sent names (weak or strong), undefined for anything else. */
export function versionOfEtag(etag: string | null): number | undefined {
  const match = etag === null ? null : ETAG.exec(etag);
  return match ? Number(match[1]) : undefined;
}

/** The version an If-Match header names, undefined without one; `*` means "any". */
export function parseIfMatch(header: string | null): number | undefined {
  if (header === null || header.trim() === "*") return undefined;
  const version = versionOfEtag(header);
  if (version === undefined) throw badRequest('If-Match must be an ETag returned by Porta, such as "v3".');
  return version;
}
