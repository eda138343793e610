import { UuidSchema } from "~/schemas/uuid";
import type { AuditEventType } from "~/schemas/audit-events";
import type { AuditEntry } from "../../context";
import { z } from "zod";
import {
  CLIENT_STATUS_VALUES,
  ClientCreateSchema,
  ClientSchema,
  ClientSecretSchema,
  ClientUpdateSchema,
  CreatedClientSchema,
  LoginMethodsBodySchema,
  NewSecretSchema,
  SecretCreateSchema,
} from "~/schemas/client";
import {
  createClient,
  deleteClient,
  generateSecret,
  requireClient,
  listClients,
  listSecrets,
  revokeSecret,
  setClientLoginMethods,
  setClientStatus,
  toClient,
  toSecret,
  updateClient,
  type ClientWithOrg,
} from "../clients/service";
import { auditHistory } from "../http/history";
import { HistoryEntrySchema, historyOf, pageOf } from "../http/openapi-shapes";
import { HistoryQuerySchema, ListQuerySchema } from "../http/pagination";
import { operation, type OperationContext } from "../http/route";

/** Client operations of the Admin API; the route modules under app/routes serve them. */
const uuid = () => UuidSchema;
const NoQuery = z.object({}).strict();
/** Client ids are UUIDs for clients made here, other tokens for clients made otherwise (the admin client). */
export const ClientId = z
  .string()
  .min(1)
  .max(200, "must have at most 200 characters")
  .regex(/^[A-Za-z0-9._~:-]+$/, "is not a client id");
const ClientParams = z.object({ id: ClientId });
const SecretParams = z.object({ id: ClientId, secretId: uuid() });

const ListQuery = ListQuerySchema.extend({
  organizationId: uuid().optional(),
  applicationId: uuid().optional(),
  status: z.enum(CLIENT_STATUS_VALUES).optional(),
  q: z.string().trim().max(200, "must have at most 200 characters").optional(),
  sort: z.enum(["createdAt", "name"]).optional(),
}).strict();

type Audit = OperationContext<unknown, unknown, unknown>["audit"];

/** Every client change is recorded on the client. Secret values never reach the audit log. */
function auditClient(audit: Audit, eventType: AuditEventType, client: ClientWithOrg, data: Record<string, unknown> = {}, changes?: AuditEntry["changes"]) {
  audit({ eventType, organizationId: client.organizationId, targetType: "client", targetId: client.id, data, ...(changes ? { changes } : {}) });
}

/** /clients */
export const clientsOperations = [
  operation({
    method: "GET",
    path: "/clients",
    operationId: "clients.list",
    summary: "List clients, optionally of one organization or application (offset or cursor paging)",
    tag: "clients",
    permission: "admin:client:read",
    query: ListQuery,
    response: pageOf(ClientSchema),
    handler: async ({ ctx, query }) => ({ body: await listClients(ctx, query) }),
  }),
  operation({
    method: "POST",
    path: "/clients",
    operationId: "clients.create",
    summary: "Create a client; a confidential client's first secret is in this response and never shown again",
    tag: "clients",
    permission: "admin:client:write",
    query: NoQuery,
    body: ClientCreateSchema,
    response: CreatedClientSchema,
    successStatus: 201,
    etag: true,
    handler: async ({ ctx, body }) => {
      const { client, secret } = await createClient(ctx, body);
      auditClient(ctx.audit, "client.created", client, { change: body, ...(secret ? { secretId: secret.id } : {}) });
      return { body: { ...toClient(client), ...(secret ? { secret } : {}) }, version: client.version };
    },
  }),
];

/** /clients/{id} */
export const clientsIdOperations = [
  operation({
    method: "GET",
    path: "/clients/{id}",
    operationId: "clients.get",
    summary: "Get a client",
    tag: "clients",
    permission: "admin:client:read",
    params: ClientParams,
    query: NoQuery,
    response: ClientSchema,
    etag: true,
    handler: async ({ ctx, params }) => {
      const row = await requireClient(ctx, params.id);
      return { body: toClient(row), version: row.version };
    },
  }),
  operation({
    method: "PUT",
    path: "/clients/{id}",
    operationId: "clients.update",
    summary: "Update a client (redirect URIs, grant types, scope, application, login methods, CORS origins, skip-consent, PKCE, token lifetimes, authentication method and public keys); If-Match guards against lost updates",
    tag: "clients",
    permission: "admin:client:write",
    params: ClientParams,
    query: NoQuery,
    body: ClientUpdateSchema,
    response: ClientSchema,
    etag: true,
    handler: async ({ ctx, params, body, ifMatch }) => {
      const before = toClient(await requireClient(ctx, params.id));
      const row = await updateClient(ctx, params.id, body, ifMatch);
      auditClient(ctx.audit, "client.updated", row, { change: body }, { before, after: toClient(row) });
      return { body: toClient(row), version: row.version };
    },
  }),
  operation({
    method: "DELETE",
    path: "/clients/{id}",
    operationId: "clients.delete",
    summary: "Delete a client and its secrets; it cannot authenticate any more",
    tag: "clients",
    permission: "admin:client:write",
    params: ClientParams,
    query: NoQuery,
    successStatus: 204,
    handler: async ({ ctx, params, ifMatch }) => {
      const row = await deleteClient(ctx, params.id, ifMatch);
      auditClient(ctx.audit, "client.deleted", row, { change: { name: row.name } });
      return {};
    },
  }),
];

function statusOperation(status: "active" | "inactive") {
  const verb = status === "active" ? "activate" : "deactivate";
  return operation({
    method: "POST",
    path: `/clients/{id}/${verb}`,
    operationId: `clients.${verb}`,
    summary: status === "active" ? "Activate a client" : "Deactivate a client: it cannot authenticate until activated again",
    tag: "clients",
    permission: "admin:client:write",
    params: ClientParams,
    query: NoQuery,
    response: ClientSchema,
    etag: true,
    handler: async ({ ctx, params, ifMatch }) => {
      const row = await setClientStatus(ctx, params.id, status, ifMatch);
      auditClient(ctx.audit, `client.${verb}d`, row, { change: { status } });
      return { body: toClient(row), version: row.version };
    },
  });
}

/** /clients/{id}/activate */
export const clientsIdActivateOperations = [statusOperation("active")];

/** /clients/{id}/deactivate */
export const clientsIdDeactivateOperations = [statusOperation("inactive")];

/** /clients/{id}/history */
export const clientsIdHistoryOperations = [
  operation({
    method: "GET",
    path: "/clients/{id}/history",
    operationId: "clients.getHistory",
    summary: "The client's change history (secrets and login methods included), newest first",
    tag: "clients",
    permission: "admin:client:read",
    params: ClientParams,
    query: HistoryQuerySchema,
    response: historyOf(HistoryEntrySchema),
    handler: async ({ ctx, params, query }) => {
      await requireClient(ctx, params.id);
      return { body: await auditHistory(ctx.db, { targetType: "client", targetId: params.id }, query) };
    },
  }),
];

/** /clients/{id}/secrets */
export const clientsIdSecretsOperations = [
  operation({
    method: "GET",
    path: "/clients/{id}/secrets",
    operationId: "clients.listSecrets",
    summary: "List a client's secrets (hints only; values are never shown again)",
    tag: "clients",
    permission: "admin:client:read",
    params: ClientParams,
    query: ListQuerySchema,
    response: pageOf(ClientSecretSchema),
    handler: async ({ ctx, params, query }) => ({ body: await listSecrets(ctx, params.id, query) }),
  }),
  operation({
    method: "POST",
    path: "/clients/{id}/secrets",
    operationId: "clients.generateSecret",
    summary: "Generate a further secret (shown in this response only); existing secrets stay valid until revoked",
    tag: "clients",
    permission: "admin:client:write",
    params: ClientParams,
    query: NoQuery,
    body: SecretCreateSchema,
    response: ClientSecretSchema.extend({ value: NewSecretSchema.shape.value }),
    successStatus: 201,
    handler: async ({ ctx, params, body }) => {
      const { client, row, value } = await generateSecret(ctx, params.id, body);
      auditClient(ctx.audit, "client.secret_generated", client, { secretId: row.id, change: { label: row.label, expiresAt: row.expiresAt?.toISOString() ?? null } });
      return { body: { ...toSecret(row), value } };
    },
  }),
];

/** /clients/{id}/secrets/{secretId} */
export const clientsIdSecretsIdOperations = [
  operation({
    method: "DELETE",
    path: "/clients/{id}/secrets/{secretId}",
    operationId: "clients.revokeSecret",
    summary: "Revoke a secret: it stops working at once",
    tag: "clients",
    permission: "admin:client:write",
    params: SecretParams,
    query: NoQuery,
    successStatus: 204,
    handler: async ({ ctx, params }) => {
      const { client, row } = await revokeSecret(ctx, params.id, params.secretId);
      auditClient(ctx.audit, "client.secret_revoked", client, { secretId: row.id });
      return {};
    },
  }),
];

/** /clients/{id}/login-methods */
export const clientsIdLoginMethodsOperations = [
  operation({
    method: "PUT",
    path: "/clients/{id}/login-methods",
    operationId: "clients.setLoginMethods",
    summary: "Set the client's login-method override (a non-empty subset of password, magic_link)",
    tag: "clients",
    permission: "admin:client:write",
    params: ClientParams,
    query: NoQuery,
    body: LoginMethodsBodySchema,
    response: ClientSchema,
    etag: true,
    handler: async ({ ctx, params, body, ifMatch }) => {
      const row = await setClientLoginMethods(ctx, params.id, body.loginMethods, ifMatch);
      auditClient(ctx.audit, "client.login_methods_updated", row, { change: body });
      return { body: toClient(row), version: row.version };
    },
  }),
  operation({
    method: "DELETE",
    path: "/clients/{id}/login-methods",
    operationId: "clients.clearLoginMethods",
    summary: "Clear the client's override: it inherits the organization's defaultLoginMethods",
    tag: "clients",
    permission: "admin:client:write",
    params: ClientParams,
    query: NoQuery,
    response: ClientSchema,
    etag: true,
    handler: async ({ ctx, params, ifMatch }) => {
      const row = await setClientLoginMethods(ctx, params.id, null, ifMatch);
      auditClient(ctx.audit, "client.login_methods_cleared", row, { change: { loginMethods: null } });
      return { body: toClient(row), version: row.version };
    },
  }),
];
