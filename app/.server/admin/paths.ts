import { SLUG_PATTERN_ANY_CASE } from "~/schemas/slug";

/**
 * The Admin API's paths: `/api/admin/...`, and an organization's own door onto it,
 * `/{slug}/api/admin/...` (decision 090). A module of its own so that the edge guard can know
 * these paths (and answer them with the Admin API's error body) without loading the API.
 */
const ORGANIZATION_ADMIN_PATH = /^\/([^/]+)\/api\/admin(?:\/.*)?$/;

export function isAdminApiPath(path: string): boolean {
  if (path === "/api/admin" || path.startsWith("/api/admin/")) return true;
  const match = ORGANIZATION_ADMIN_PATH.exec(path);
  return Boolean(match && SLUG_PATTERN_ANY_CASE.test(match[1]!));
}
