import { SLUG_PATTERN_ANY_CASE } from "~/schemas/slug";

/**
 * `/{slug}/register` (RFC 7591) and `/{slug}/register/{client_id}` (RFC 7592), decision 054.
 * A module of its own so that the edge guard can know these paths without loading the service.
 */
const REGISTRATION_PATH = /^\/([^/]+)\/register(?:\/[^/]+)?\/?$/;

/** True for a path (below the origin) of a registration endpoint: the edge guard treats it as protocol. */
export function isRegistrationPath(path: string): boolean {
  const match = REGISTRATION_PATH.exec(path);
  return Boolean(match && SLUG_PATTERN_ANY_CASE.test(match[1]!));
}

/** The organization's registration endpoint, as discovery names it. */
export const registrationEndpointOf = (issuer: string): string => `${issuer}/register`;
