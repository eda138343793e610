import { z } from "zod";
import { operation } from "../http/route";
import { forgetAdminKeyCache } from "../http/require-admin";
import type { SigningKeyInfo } from "../../oidc/keys";

/** Signing keys: list, generate (staged), rotate. The private half never leaves the server. */
// These operations take no input: a query parameter or body field is a mistake the caller should hear about.
const NoQuery = z.object({}).strict();
const NoBody = z.object({}).strict().optional();
const KeySchema = z.object({
  kid: z.string(),
  alg: z.literal("ES256"),
  status: z.enum(["staged", "active", "retiring", "retired"]),
  createdAt: z.iso.datetime(),
  retireAfter: z.iso.datetime().nullable(),
  retiredAt: z.iso.datetime().nullable(),
  publicJwk: z.record(z.string(), z.unknown()),
});

const toKey = (key: SigningKeyInfo) => ({
  kid: key.kid,
  alg: key.alg,
  status: key.status,
  createdAt: key.createdAt.toISOString(),
  retireAfter: key.retireAfter?.toISOString() ?? null,
  retiredAt: key.retiredAt?.toISOString() ?? null,
  publicJwk: key.publicJwk,
});

export const keysOperations = [
  operation({
    method: "GET",
    path: "/keys",
    operationId: "keys.list",
    summary: "List signing keys (public parts and life-cycle state)",
    tag: "keys",
    permission: "admin:key:read",
    query: NoQuery,
    response: z.object({ data: z.array(KeySchema) }),
    handler: async ({ services }) => ({ body: { data: (await services.keys.list()).map(toKey) } }),
  }),
  operation({
    method: "POST",
    path: "/keys",
    operationId: "keys.generate",
    summary: "Generate a staged key: published in the JWKS at once, signing from the next rotation",
    tag: "keys",
    permission: "admin:key:write",
    query: NoQuery,
    body: NoBody,
    response: KeySchema,
    successStatus: 201,
    handler: async ({ services, audit }) => {
      const key = await services.keys.generate();
      forgetAdminKeyCache(services);
      audit({ eventType: "key.generated", targetType: "signing_key", targetId: key.kid, data: { status: key.status } });
      return { body: toKey(key) };
    },
  }),
];

export const keysRotateOperations = [
  operation({
    method: "POST",
    path: "/keys/rotate",
    operationId: "keys.rotate",
    summary: "Rotate: the newest staged key (or a new one) signs from now on; the previous key stays published until its tokens expire",
    tag: "keys",
    permission: "admin:key:write",
    query: NoQuery,
    body: NoBody,
    response: KeySchema,
    handler: async ({ services, audit }) => {
      const key = await services.keys.rotate();
      forgetAdminKeyCache(services);
      audit({ eventType: "key.rotated", targetType: "signing_key", targetId: key.kid, data: {} });
      return { body: toKey(key) };
    },
  }),
];
