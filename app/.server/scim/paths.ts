import { SLUG_PATTERN_ANY_CASE } from "~/schemas/slug";

/**
 * `/{slug}/scim/v2/...`, an organization's SCIM 2.0 endpoint (decision 084). A module of its own
 * so that the edge guard can know these paths without loading the service.
 */
const SCIM_PATH = /^\/([^/]+)\/scim\/v2(?:\/.*)?$/;

/** True for a path (below the origin) of an organization's SCIM endpoint: the edge guard answers it with SCIM errors. */
export function isScimPath(path: string): boolean {
  const match = SCIM_PATH.exec(path);
  return Boolean(match && SLUG_PATTERN_ANY_CASE.test(match[1]!));
}

/** The organization's SCIM base URL, as operators give it to their identity provider. */
export const scimEndpointOf = (baseUrl: string, slug: string): string =>
  `${baseUrl.replace(/\/$/, "")}/${slug}/scim/v2`;
