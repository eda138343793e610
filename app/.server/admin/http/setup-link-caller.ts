import type { Caller } from "./caller";

/**
 * What a setup link's holder may run (decision 089): the organization's SSO connections, SCIM
 * tokens and domains, nothing else. Deleting a connection is not among them: it unlinks every
 * account signed in through it, which is the service admins' call; a connection set up wrongly
 * is corrected or disabled instead. Every operation here declares an organization scope, so
 * `runOperation` holds each target to the link's organization before its handler runs.
 */
export const SETUP_LINK_OPERATIONS: ReadonlySet<string> = new Set([
  "identityProviders.list",
  "identityProviders.get",
  "identityProviders.create",
  "identityProviders.update",
  "identityProviders.refreshSamlMetadata",
  "scimTokens.list",
  "scimTokens.create",
  "scimTokens.revoke",
  "domains.list",
  "domains.add",
  "domains.get",
  "domains.verify",
  "domains.delete",
]);

/** The caller a setup link's browser runs operations as: audited with actor `setup_link` and the link's id. */
export function setupLinkCaller(link: { id: string; organizationId: string; note: string | null }): Caller {
  return {
    actorType: "setup_link",
    admin: { id: link.id, email: link.note ?? "setup link", organizationId: link.organizationId, roles: [], permissions: new Set() },
    organizationId: link.organizationId,
    may: (op) => SETUP_LINK_OPERATIONS.has(op.operationId),
  };
}
