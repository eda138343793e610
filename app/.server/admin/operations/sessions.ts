import { UuidSchema } from "~/schemas/uuid";
import { z } from "zod";
import { describeSessions, listSessions, revokeSession, revokeUserSessions } from "../sessions/service";
import { pageOf } from "../http/openapi-shapes";
import { ListQuerySchema } from "../http/pagination";
import { IdParams, operation } from "../http/route";

const SessionSchema = z.object({
  id: z.string(),
  organizationId: UuidSchema,
  userId: z.string().nullable(),
  clientId: z.string().nullable(),
  createdAt: z.iso.datetime(),
  expiresAt: z.iso.datetime().nullable(),
  userEmail: z.string().nullable(),
  clientName: z.string().nullable(),
  ip: z.string().nullable(),
  userAgent: z.string().nullable(),
  lastSeenAt: z.iso.datetime().nullable(),
});

export const sessionsOperations = [
  operation({
    method: "GET",
    path: "/sessions",
    operationId: "sessions.list",
    summary:
      "Active sessions (grants of a user to a client), per organization and/or user (by id, or by name or slug and email: every exact match counts, a name that matches nothing is a 422), with the user's email, the client's name, and the IP address, browser and last activity of the browser session holding the grant (null once that ended)",
    tag: "sessions",
    permission: "admin:session:read",
    organizationScope: [{ in: "query", field: "organizationId", unbound: ["organization", "user"] }],
    query: ListQuerySchema.extend({
      organizationId: UuidSchema.optional(),
      userId: UuidSchema.optional(),
      organization: z.string().trim().min(1, "must not be empty").max(200).optional(),
      user: z.string().trim().min(1, "must not be empty").max(320).optional(),
    }).strict(),
    response: pageOf(SessionSchema),
    handler: async ({ ctx, query }) => {
      const page = await listSessions(ctx, query);
      return { body: { ...page, data: await describeSessions(ctx, page.data) } };
    },
  }),
];

export const sessionByIdOperations = [
  operation({
    method: "DELETE",
    path: "/sessions/{id}",
    operationId: "sessions.revoke",
    summary: "Revoke a session: its refresh and access tokens stop working at once",
    tag: "sessions",
    permission: "admin:session:write",
    params: z.object({ id: z.string().min(10).max(200) }),
    successStatus: 204,
    handler: async ({ ctx, params }) => {
      const session = await revokeSession(ctx, params.id);
      ctx.audit({ eventType: "session.revoked", organizationId: session.organizationId, targetType: "user", targetId: session.userId, data: { clientId: session.clientId } });
      return {};
    },
  }),
];

export const userSessionsOperations = [
  operation({
    method: "DELETE",
    path: "/users/{id}/sessions",
    operationId: "sessions.revokeForUser",
    summary: "End every session and token of a user",
    tag: "sessions",
    permission: "admin:session:write",
    organizationScope: [{ in: "entity", param: "id", owner: "user" }],
    params: IdParams,
    successStatus: 204,
    handler: async ({ ctx, params }) => {
      const result = await revokeUserSessions(ctx, params.id);
      ctx.audit({ eventType: "user.sessions_revoked", organizationId: result.organizationId, targetType: "user", targetId: params.id, data: {} });
      return {};
    },
  }),
];
