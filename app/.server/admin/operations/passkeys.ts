import { z } from "zod";
import { PasskeySchema } from "~/schemas/passkey";
import { UuidSchema } from "~/schemas/uuid";
import type { Context } from "../../context";
import { notFound } from "../../errors";
import { deletePasskey, listPasskeys, type PasskeySummary } from "../../passkeys/service";
import { IdParams, operation } from "../http/route";

/** A user's passkeys for administrators (decision 041): list them, delete one (audited `user.passkey.deleted`). */
const NoQuery = z.object({}).strict();

async function requireUser(ctx: Context, id: string) {
  const user = await ctx.db.user.findUnique({ where: { id }, select: { id: true, organizationId: true } });
  if (!user) throw notFound("user");
  return user;
}

const toBody = (userId: string, p: PasskeySummary) => ({
  id: p.id,
  userId,
  name: p.name,
  createdAt: p.createdAt.toISOString(),
  lastUsedAt: p.lastUsedAt?.toISOString() ?? null,
  deviceType: p.deviceType === "multiDevice" ? ("multiDevice" as const) : ("singleDevice" as const),
  backedUp: p.backedUp,
  aaguid: p.aaguid,
  transports: p.transports,
});

export const userPasskeyOperations = [
  operation({
    method: "GET",
    path: "/users/{id}/passkeys",
    operationId: "passkeys.list",
    summary: "A user's passkeys (name, created, last used, authenticator type); never key material",
    tag: "two-factor",
    permission: "admin:2fa:read",
    organizationScope: [{ in: "entity", param: "id", owner: "user" }],
    params: IdParams,
    query: NoQuery,
    response: z.object({ data: z.array(PasskeySchema) }),
    handler: async ({ ctx, params }) => {
      await requireUser(ctx, params.id);
      return { body: { data: (await listPasskeys(ctx.db, params.id)).map((p) => toBody(params.id, p)) } };
    },
  }),
  operation({
    method: "DELETE",
    path: "/users/{id}/passkeys/{passkeyId}",
    operationId: "passkeys.delete",
    summary: "Delete one of a user's passkeys; it no longer signs in",
    tag: "two-factor",
    permission: "admin:2fa:write",
    organizationScope: [{ in: "entity", param: "id", owner: "user" }],
    params: z.object({ id: UuidSchema, passkeyId: UuidSchema }),
    response: PasskeySchema,
    handler: async ({ ctx, params }) => {
      const user = await requireUser(ctx, params.id);
      const removed = await deletePasskey(ctx.db, { organizationId: user.organizationId, userId: user.id }, params.passkeyId);
      if (!removed) throw notFound("passkey");
      ctx.audit({ eventType: "user.passkey.deleted", organizationId: user.organizationId, targetType: "user", targetId: user.id, data: { passkeyId: removed.id, name: removed.name } });
      return { body: toBody(user.id, removed) };
    },
  }),
];
