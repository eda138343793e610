import type { Db } from "../../context";
import { notFound, validation } from "../../errors";

/**
 * Where an operation's target names its organization. The Admin API's own callers (service
 * admins) reach every organization; a caller bound to one organization (an organization's own
 * administrators, a setup link) may run only operations that declare a scope, and only on targets
 * of that organization. An operation without a scope is never reachable by a bound caller.
 *
 * - `path`: a path parameter is the organization's id;
 * - `query` / `body`: a field names the organization; a bound caller who leaves it out gets its
 *   own organization filled in (so a list never spans organizations);
 * - `entity`: a path parameter names a row whose organization is looked up.
 */
export type OrganizationScope =
  | { in: "path"; param: string }
  | {
      in: "query";
      field: string;
      /**
       * Filters that name things in every organization (names, slugs, email addresses): a bound
       * caller may not use them, since "matches nothing" against "matches elsewhere" would tell it
       * what exists in other organizations. It filters by id instead.
       */
      unbound?: readonly string[];
    }
  | { in: "body"; field: string }
  | { in: "entity"; param: string; owner: OwnedTable };

/** The tables whose rows carry an `organizationId` a bound caller may be checked against. */
export type OwnedTable = "user" | "role" | "permission" | "identityProvider" | "organizationDomain" | "scimToken" | "invitation" | "application" | "client" | "apiResource" | "setupLink" | "auditEntry";

/** A row's organization; an audit entry of the deployment itself has none (no bound caller reaches it). */
type Owner = { organizationId: string | null } | null;
const byId = (id: string) => ({ where: { id }, select: { organizationId: true } }) as const;

/** How each owned table finds a row's organization. */
const OWNERS: Record<OwnedTable, (db: Db, id: string) => Promise<Owner>> = {
  user: (db, id) => db.user.findUnique(byId(id)),
  role: (db, id) => db.role.findUnique(byId(id)),
  permission: (db, id) => db.permission.findUnique(byId(id)),
  identityProvider: (db, id) => db.identityProvider.findUnique(byId(id)),
  organizationDomain: (db, id) => db.organizationDomain.findUnique(byId(id)),
  scimToken: (db, id) => db.scimToken.findUnique(byId(id)),
  invitation: (db, id) => db.invitation.findUnique(byId(id)),
  application: (db, id) => db.application.findUnique(byId(id)),
  client: (db, id) => db.client.findUnique(byId(id)),
  apiResource: (db, id) => db.apiResource.findUnique(byId(id)),
  setupLink: (db, id) => db.setupLink.findUnique(byId(id)),
  auditEntry: (db, id) => db.auditEntry.findUnique(byId(id)),
};

async function organizationOf(db: Db, table: OwnedTable, id: string): Promise<string | null> {
  return (await OWNERS[table](db, id))?.organizationId ?? null;
}

/** The answer for a target of another organization: the same as for one that does not exist. */
const elsewhere = () => notFound("target");

function record(value: unknown): Record<string, unknown> | null {
  return typeof value === "object" && value !== null ? (value as Record<string, unknown>) : null;
}

/**
 * Holds a bound caller to its organization: every scope of the operation must name it. Query and
 * body fields left out are filled with it (the parsed objects are the handler's own input).
 */
export async function requireWithinOrganization(
  db: Db,
  organizationId: string,
  scopes: readonly OrganizationScope[],
  input: { params: unknown; query: unknown; body: unknown },
): Promise<void> {
  if (scopes.length === 0) throw elsewhere();
  for (const scope of scopes) {
    if (scope.in === "path") {
      if (record(input.params)?.[scope.param] !== organizationId) throw elsewhere();
    } else if (scope.in === "query" || scope.in === "body") {
      const holder = record(scope.in === "query" ? input.query : input.body);
      const unbound = scope.in === "query" ? (scope.unbound ?? []).filter((field) => holder?.[field] !== undefined) : [];
      if (unbound.length > 0) {
        throw validation(unbound.map((field) => ({ field, message: "is not available to an organization's administrators (it searches every organization); filter by id" })));
      }
      if (!holder) throw elsewhere();
      if (holder[scope.field] === undefined) holder[scope.field] = organizationId;
      else if (holder[scope.field] !== organizationId) throw elsewhere();
    } else {
      const id = record(input.params)?.[scope.param];
      if (typeof id !== "string" || (await organizationOf(db, scope.owner, id)) !== organizationId) throw elsewhere();
    }
  }
}
