import { badRequest } from "../../errors";

/** Strong ETags from the entity's `version` column: `"v<version>"`. */
export const etagOf = (version: number) => `"v${version}"`;

/** The version an If-Match header names, undefined without one; `*` means "any". */
export function parseIfMatch(header: string | null): number | undefined {
  if (header === null || header.trim() === "*") return undefined;
  const match = /^\s*(?:W\/)?"v(\d{1,10})"\s*$/.exec(header);
  if (!match) throw badRequest('If-Match must be an ETag returned by Porta, such as "v3".');
  return Number(match[1]);
}
