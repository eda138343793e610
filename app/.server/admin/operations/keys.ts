import { UuidSchema } from "~/schemas/uuid";
import { z } from "zod";
import type { SigningKeyInfo } from "../../oidc/provider/keys";
import { listKeys, requireKeyOrganization } from "../keys/service";
import { pageOf } from "../http/openapi-shapes";
import { ListQuerySchema } from "../http/pagination";
import { operation } from "../http/route";

/**
 * Signing keys, per organization (decision 016): list, generate (staged), rotate; and, for
 * operators, every key and a rotation of every organization. The private half never leaves
 * the server. Keys carry no version, so these operations send no ETag.
 */
// The writes take no input: a query parameter or body field is a mistake the caller should hear about.
const NoQuery = z.object({}).strict();
const NoBody = z.object({}).strict().optional();
const OrgParams = z.object({ orgId: UuidSchema });
const KeyListQuery = ListQuerySchema.extend({
  organizationId: UuidSchema.optional().describe("Only this organization's keys"),
}).strict();

const KeySchema = z.object({
  kid: z.string(),
  alg: z.literal("ES256"),
  status: z.enum(["staged", "active", "retiring", "retired"]),
  organizationId: z
    .uuid()
    .nullable()
    .describe("The organization whose tokens the key signs; null for a key an earlier version shared between all organizations (it verifies, never signs, until it retires)"),
  createdAt: z.iso.datetime(),
  retireAfter: z.iso.datetime().nullable(),
  retiredAt: z.iso.datetime().nullable(),
  publicJwk: z.record(z.string(), z.unknown()),
});

const toKey = (key: SigningKeyInfo) => ({
  kid: key.kid,
  alg: key.alg,
  status: key.status,
  organizationId: key.organizationId,
  createdAt: key.createdAt.toISOString(),
  retireAfter: key.retireAfter?.toISOString() ?? null,
  retiredAt: key.retiredAt?.toISOString() ?? null,
  publicJwk: key.publicJwk,
});

/** /keys */
export const keysOperations = [
  operation({
    method: "GET",
    path: "/keys",
    operationId: "keys.list",
    summary: "List the signing keys of every organization (or of one, with organizationId), newest first, with their organization",
    tag: "keys",
    permission: "admin:key:read",
    query: KeyListQuery,
    response: pageOf(KeySchema),
    handler: async ({ ctx, query }) => {
      const page = await listKeys(ctx, query);
      return { body: { ...page, data: page.data.map(toKey) } };
    },
  }),
];

/** /keys/rotate */
export const keysRotateOperations = [
  operation({
    method: "POST",
    path: "/keys/rotate",
    operationId: "keys.rotateAll",
    summary:
      "Rotate every organization that is not deleted (for operators): each one's newest staged key (or a new one) signs from now on, its previous key stays published until its tokens expire",
    tag: "keys",
    permission: "admin:key:write",
    query: NoQuery,
    body: NoBody,
    response: z.object({ rotatedOrganizations: z.number().int() }),
    // Outside the request's transaction: the key service rotates in batches of its own, each
    // committed, rather than every organization's keys (and locks) in one transaction held for
    // the whole rotation. Its summary entry is written once the rotation has succeeded.
    readOnly: true,
    handler: async ({ ctx }) => {
      // The admin's cached published keys notice the change through the key service's change count.
      const rotated = await ctx.keys.rotateAll();
      // One summary entry: a rotation of a hundred thousand organizations is one operator action.
      ctx.audit({ eventType: "key.rotated_all", targetType: "signing_key", data: { organizations: rotated } });
      return { body: { rotatedOrganizations: rotated } };
    },
  }),
];

/** /organizations/{orgId}/keys */
export const organizationKeysOperations = [
  operation({
    method: "GET",
    path: "/organizations/{orgId}/keys",
    operationId: "keys.listByOrganization",
    summary: "List an organization's signing keys (public parts and life-cycle state), newest first",
    tag: "keys",
    permission: "admin:key:read",
    params: OrgParams,
    query: NoQuery,
    response: z.object({ data: z.array(KeySchema) }),
    handler: async ({ ctx, params }) => {
      await requireKeyOrganization(ctx, params.orgId);
      // A read: no transaction is open, so the key service may create a missing first key on its own.
      return { body: { data: (await ctx.keys.list(params.orgId)).map(toKey) } };
    },
  }),
  operation({
    method: "POST",
    path: "/organizations/{orgId}/keys",
    operationId: "keys.generate",
    summary: "Generate a staged key for an organization: published in its JWKS at once, signing from its next rotation",
    tag: "keys",
    permission: "admin:key:write",
    params: OrgParams,
    query: NoQuery,
    body: NoBody,
    response: KeySchema,
    successStatus: 201,
    handler: async ({ ctx, params }) => {
      await requireKeyOrganization(ctx, params.orgId);
      // The providers (and the admin's cached published keys) hear of it once it has committed.
      const key = await ctx.keys.generateIn(ctx.db, params.orgId, ctx.afterCommit);
      ctx.audit({ eventType: "key.generated", organizationId: params.orgId, targetType: "signing_key", targetId: key.kid, data: { status: key.status } });
      return { body: toKey(key) };
    },
  }),
];

/** /organizations/{orgId}/keys/rotate */
export const organizationKeysRotateOperations = [
  operation({
    method: "POST",
    path: "/organizations/{orgId}/keys/rotate",
    operationId: "keys.rotate",
    summary:
      "Rotate an organization's key: its newest staged key (or a new one) signs from now on; the previous key stays published until its tokens expire. Other organizations are not touched",
    tag: "keys",
    permission: "admin:key:write",
    params: OrgParams,
    query: NoQuery,
    body: NoBody,
    response: KeySchema,
    handler: async ({ ctx, params }) => {
      await requireKeyOrganization(ctx, params.orgId);
      const key = await ctx.keys.rotateIn(ctx.db, params.orgId, ctx.afterCommit);
      ctx.audit({ eventType: "key.rotated", organizationId: params.orgId, targetType: "signing_key", targetId: key.kid, data: {} });
      return { body: toKey(key) };
    },
  }),
];
