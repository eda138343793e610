import type { Database } from "../../db/client";

/**
 * Whether a browser at `origin` may call this organization's client endpoints (token, PAR,
 * introspection, revocation, device authorization): some client of the organization lists the
 * origin as allowed, or has a redirect URI there (the same two sources `corsAllowed` checks on the
 * request itself, where the client is known). A preflight names no client, so the organization's
 * clients together decide it (decision 071).
 */
export type PreflightOrigins = (organizationId: string, origin: string) => Promise<boolean>;

/** The endpoints whose CORS oidc-provider decides per client (`clientBasedCORS`), as /{slug} paths. */
export const CLIENT_CORS_PATHS: ReadonlySet<string> = new Set(["/auth/token", "/auth/par", "/token/introspection", "/token/revocation", "/device/auth"]);

/** A browser's Origin header as browsers send it: scheme, host and a port other than the default. */
export function isSerializedOrigin(origin: string): boolean {
  return origin.length <= 2048 && URL.canParse(origin) && new URL(origin).origin === origin;
}

export function createPreflightOrigins(db: Pick<Database, "query">): PreflightOrigins {
  return async (organizationId, origin) => {
    if (!isSerializedOrigin(origin)) return false;
    const rows = await db.query<{ allowed: boolean }>(
      `SELECT EXISTS (
         SELECT 1 FROM "Client" c
         WHERE c."organizationId" = $1::uuid
           AND ($2 = ANY(c."allowedCorsOrigins")
             OR EXISTS (SELECT 1 FROM unnest(c."redirectUris") AS r(uri)
                        WHERE r.uri = $2 OR starts_with(r.uri, $2 || '/') OR starts_with(r.uri, $2 || '?') OR starts_with(r.uri, $2 || '#')))
       ) AS "allowed"`,
      [organizationId, origin],
    );
    return rows[0]?.allowed === true;
  };
}
