import { ScimError } from "./errors";

/**
 * What every SCIM resource module shares: the organization the request is bound to, the list
 * envelope and paging (RFC 7644 §3.4.2), and versions as weak ETags (§3.14).
 */
export interface ScimScope {
  organizationId: string;
  /** `{BASE_URL}/{slug}/scim/v2`, from which `meta.location` is built. */
  endpoint: string;
}

export const LIST_RESPONSE_SCHEMA =
  "urn:ietf:params:scim:api:messages:2.0:ListResponse";
export const MAX_COUNT = 200;
export const DEFAULT_COUNT = 100;

export interface Paging {
  /** 1-based, as SCIM counts. */
  startIndex: number;
  count: number;
}

/** `startIndex` below 1 is 1 and `count` below 0 is 0 (§3.4.2.4); a count above the maximum is the maximum; anything not a number is 400. */
export function pagingOf(startIndex: unknown, count: unknown): Paging {
  const integer = (value: unknown, name: string, fallback: number) => {
    if (value === undefined) return fallback;
    if (typeof value !== "string" || !/^-?\d{1,9}$/.test(value))
      throw new ScimError(400, `${name} must be an integer.`, "invalidValue");
    return Number(value);
  };
  return {
    startIndex: Math.max(1, integer(startIndex, "startIndex", 1)),
    count: Math.min(
      MAX_COUNT,
      Math.max(0, integer(count, "count", DEFAULT_COUNT))
    ),
  };
}

export function listResponse<T>(resources: T[], total: number, paging: Paging) {
  return {
    schemas: [LIST_RESPONSE_SCHEMA],
    totalResults: total,
    startIndex: paging.startIndex,
    itemsPerPage: resources.length,
    Resources: resources,
  };
}

export const etagOf = (version: number) => `W/"${version}"`;

/** The version an If-Match names (`W/"3"` or `"3"`), `*` as no condition, or 412 for anything else. */
export function ifMatchVersion(header: string | undefined): number | undefined {
  if (header === undefined || header.trim() === "*") return undefined;
  const match = /^\s*(?:W\/)?"(\d{1,9})"\s*$/.exec(header);
  if (!match)
    throw new ScimError(
      412,
      "If-Match does not name a version of this resource."
    );
  return Number(match[1]);
}

export function metaOf(
  resourceType: "User" | "Group",
  scope: ScimScope,
  row: { id: string; version: number; createdAt: Date; updatedAt: Date }
) {
  return {
    resourceType,
    created: row.createdAt.toISOString(),
    lastModified: row.updatedAt.toISOString(),
    location: `${scope.endpoint}/${resourceType}s/${row.id}`,
    version: etagOf(row.version),
  };
}

/** Text that must fit a column and be storable: trimmed, empty as null, at most `max` characters. */
export function optionalText(
  value: unknown,
  attribute: string,
  max: number
): string | null {
  if (value === undefined || value === null) return null;
  if (typeof value !== "string")
    throw new ScimError(400, `${attribute} must be a string.`, "invalidValue");
  const text = value.trim();
  if (text.length > max)
    throw new ScimError(
      400,
      `${attribute} must have at most ${max} characters.`,
      "invalidValue"
    );
  return text === "" ? null : text;
}
