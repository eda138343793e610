import { z } from "zod";
import {
  FederatedIdentitySchema,
  IdentityProviderCreateSchema,
  IdentityProviderSchema,
  IdentityProviderUpdateSchema,
} from "~/schemas/identity-provider";
import { UuidSchema } from "~/schemas/uuid";
import { notFound } from "../../errors";
import { deleteUserLink, listUserLinks } from "../../federation/links";
import {
  createIdentityProvider,
  deleteIdentityProvider,
  requireIdentityProvider,
  listIdentityProviders,
  storeRefreshedSamlMetadata,
  updateIdentityProvider,
} from "../../federation/providers";
import { prefetchIdpMetadata, refreshedSettings } from "../../federation/saml-connections";
import { conflict } from "../../errors";
import { pageOf } from "../http/openapi-shapes";
import { ListQuerySchema } from "../http/pagination";
import { IdParams, operation } from "../http/route";

/**
 * Upstream identity providers of an organization (decision 046). The client secret is
 * write-only: bodies may carry it, answers say `hasClientSecret`, the audit entry names a change
 * of it without its value.
 */
const NoQuery = z.object({}).strict();
/** A SAML connection's metadata may be pasted whole: up to 1 MiB of XML, escaped in JSON. */
const PROVIDER_BODY_MAX_BYTES = 3_000_000;
const ProviderListQuery = ListQuerySchema.extend({ organizationId: UuidSchema }).strict();

/** What the audit log may hold of a body: everything but the secret, whose presence is named. */
function withoutSecret<T extends { clientSecret?: string | null }>(body: T) {
  const { clientSecret, ...rest } = body;
  return clientSecret === undefined ? rest : { ...rest, clientSecret: clientSecret === null ? "removed" : "set" };
}

/** /identity-providers */
export const identityProvidersOperations = [
  operation({
    method: "GET",
    path: "/identity-providers",
    operationId: "identityProviders.list",
    summary: "List an organization's upstream identity providers (secrets are never shown)",
    tag: "identity providers",
    permission: "admin:idp:read",
    organizationScope: [{ in: "query", field: "organizationId" }],
    query: ProviderListQuery,
    response: pageOf(IdentityProviderSchema),
    handler: async ({ ctx, query }) => ({ body: await listIdentityProviders(ctx, query) }),
  }),
  operation({
    method: "POST",
    path: "/identity-providers",
    operationId: "identityProviders.create",
    summary: "Add an upstream identity provider (OpenID Connect, or the google / microsoft / github / apple presets) to an organization",
    tag: "identity providers",
    permission: "admin:idp:write",
    organizationScope: [{ in: "body", field: "organizationId" }],
    query: NoQuery,
    body: IdentityProviderCreateSchema,
    maxBodyBytes: PROVIDER_BODY_MAX_BYTES,
    response: IdentityProviderSchema,
    successStatus: 201,
    etag: true,
    // A SAML metadata URL is fetched before the transaction opens; the provider and its audit entry commit together.
    readOnly: true,
    handler: async ({ ctx, body, transaction }) => {
      const metadataTexts = await prefetchIdpMetadata(ctx, body.kind === "saml" ? body.samlMetadataUrl : undefined, "samlMetadataUrl");
      return transaction(async (tx) => {
        const { row, body: created } = await createIdentityProvider({ ...tx, metadataTexts }, body);
        tx.audit({ eventType: "identity_provider.created", organizationId: row.organizationId, targetType: "identity_provider", targetId: row.id, data: { change: withoutSecret(body) } });
        return { body: created, version: row.version };
      });
    },
  }),
];

/** /identity-providers/{id} */
export const identityProviderOperations = [
  operation({
    method: "GET",
    path: "/identity-providers/{id}",
    operationId: "identityProviders.get",
    summary: "Get an upstream identity provider",
    tag: "identity providers",
    permission: "admin:idp:read",
    organizationScope: [{ in: "entity", param: "id", owner: "identityProvider" }],
    params: IdParams,
    query: NoQuery,
    response: IdentityProviderSchema,
    etag: true,
    handler: async ({ ctx, params }) => {
      const { row, body } = await requireIdentityProvider(ctx, params.id);
      return { body, version: row.version };
    },
  }),
  operation({
    method: "PUT",
    path: "/identity-providers/{id}",
    operationId: "identityProviders.update",
    summary: "Change an upstream identity provider (clientSecret replaces the stored one, null removes it); If-Match guards against lost updates",
    tag: "identity providers",
    permission: "admin:idp:write",
    organizationScope: [{ in: "entity", param: "id", owner: "identityProvider" }],
    params: IdParams,
    query: NoQuery,
    body: IdentityProviderUpdateSchema,
    maxBodyBytes: PROVIDER_BODY_MAX_BYTES,
    response: IdentityProviderSchema,
    etag: true,
    handler: async ({ ctx, params, body, ifMatch }) => {
      const { before, row, body: after } = await updateIdentityProvider(ctx, params.id, body, ifMatch);
      ctx.audit({
        eventType: "identity_provider.updated",
        organizationId: row.organizationId,
        targetType: "identity_provider",
        targetId: row.id,
        data: { change: withoutSecret(body) },
        changes: { before, after },
      });
      return { body: after, version: row.version };
    },
  }),
  operation({
    method: "DELETE",
    path: "/identity-providers/{id}",
    operationId: "identityProviders.delete",
    summary: "Delete an upstream identity provider and every user's link to it (the accounts stay)",
    tag: "identity providers",
    permission: "admin:idp:write",
    organizationScope: [{ in: "entity", param: "id", owner: "identityProvider" }],
    params: IdParams,
    query: NoQuery,
    response: IdentityProviderSchema,
    handler: async ({ ctx, params, ifMatch }) => {
      const { row, body } = await deleteIdentityProvider(ctx, params.id, ifMatch);
      ctx.audit({ eventType: "identity_provider.deleted", organizationId: row.organizationId, targetType: "identity_provider", targetId: row.id, data: { name: row.name } });
      return { body };
    },
  }),
];

/** /identity-providers/{id}/saml-metadata/refresh (decision 081) */
export const samlMetadataOperations = [
  operation({
    method: "POST",
    path: "/identity-providers/{id}/saml-metadata/refresh",
    operationId: "identityProviders.refreshSamlMetadata",
    summary: "Fetch a SAML connection's metadata URL now and take its SSO URL, entity ID and signing certificates (the scheduled refresh does the same every 6 hours)",
    tag: "identity providers",
    permission: "admin:idp:write",
    organizationScope: [{ in: "entity", param: "id", owner: "identityProvider" }],
    params: IdParams,
    query: NoQuery,
    response: IdentityProviderSchema,
    etag: true,
    // The fetch runs outside any transaction; what it found is stored over the version read, with its audit entry.
    readOnly: true,
    handler: async ({ ctx, params, transaction }) => {
      const { row: current } = await requireIdentityProvider(ctx, params.id);
      if (current.kind !== "saml") throw conflict("not_saml", "Only a SAML connection has metadata to refresh.", [{ field: "id", message: `is a ${current.kind} provider` }]);
      const next = await refreshedSettings(ctx, current);
      return transaction(async (tx) => {
        const { change } = await storeRefreshedSamlMetadata(tx, current, next);
        const { row, body } = await requireIdentityProvider(tx, params.id);
        tx.audit({ eventType: "identity_provider.saml_metadata_refreshed", organizationId: row.organizationId, targetType: "identity_provider", targetId: row.id, data: { trigger: "api", change } });
        return { body, version: row.version };
      });
    },
  }),
];

/** /users/{id}/federated-identities */
export const userFederatedIdentityOperations = [
  operation({
    method: "GET",
    path: "/users/{id}/federated-identities",
    operationId: "federatedIdentities.list",
    summary: "A user's links to upstream identity providers",
    tag: "identity providers",
    permission: "admin:user:read",
    organizationScope: [{ in: "entity", param: "id", owner: "user" }],
    params: IdParams,
    query: NoQuery,
    response: z.object({ data: z.array(FederatedIdentitySchema) }),
    handler: async ({ ctx, params }) => {
      const user = await ctx.db.user.findUnique({ where: { id: params.id }, select: { id: true } });
      if (!user) throw notFound("user");
      return { body: { data: await listUserLinks(ctx.db, params.id) } };
    },
  }),
  operation({
    method: "DELETE",
    path: "/users/{id}/federated-identities/{linkId}",
    operationId: "federatedIdentities.delete",
    summary: "Remove a user's link to an upstream identity provider; that upstream account no longer signs in as this user",
    tag: "identity providers",
    permission: "admin:user:write",
    organizationScope: [{ in: "entity", param: "id", owner: "user" }],
    params: z.object({ id: UuidSchema, linkId: UuidSchema }),
    response: FederatedIdentitySchema,
    handler: async ({ ctx, params }) => {
      const removed = await deleteUserLink(ctx.db, params.id, params.linkId);
      if (!removed) throw notFound("federated identity");
      ctx.audit({
        eventType: "user.federated_identity.deleted",
        organizationId: removed.organizationId,
        targetType: "user",
        targetId: params.id,
        data: { linkId: removed.link.id, providerId: removed.link.providerId, provider: removed.link.providerName },
      });
      return { body: removed.link };
    },
  }),
];
