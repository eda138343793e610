import { z } from "zod";
import {
  CreatedRegistrationTokenSchema,
  RegistrationPolicySchema,
  RegistrationTokenCreateSchema,
  RegistrationTokenSchema,
} from "~/schemas/registration";
import { UuidSchema } from "~/schemas/uuid";
import {
  createRegistrationToken,
  requireRegistrationPolicy,
  listRegistrationTokens,
  revokeRegistrationToken,
  setRegistrationPolicy,
  toRegistrationToken,
} from "../registration/service";
import { pageOf } from "../http/openapi-shapes";
import { ListQuerySchema } from "../http/pagination";
import { IdParams, operation } from "../http/route";

/**
 * Dynamic client registration per organization (decision 054): the policy, and the
 * initial access tokens whose value is in the creating response only. The registration endpoint
 * itself is a protocol path (`/{slug}/register`), not part of this API.
 */
const NoQuery = z.object({}).strict();
const TokenParams = z.object({ id: UuidSchema, tokenId: UuidSchema });

/** /organizations/{id}/registration-policy */
export const registrationPolicyOperations = [
  operation({
    method: "GET",
    path: "/organizations/{id}/registration-policy",
    operationId: "registration.getPolicy",
    summary: "An organization's dynamic client registration policy (RFC 7591); off unless turned on",
    tag: "registration",
    permission: "admin:org:read",
    organizationScope: [{ in: "path", param: "id" }],
    params: IdParams,
    query: NoQuery,
    response: RegistrationPolicySchema,
    etag: true,
    handler: async ({ ctx, params }) => {
      const { policy, version } = await requireRegistrationPolicy(ctx, params.id);
      return { body: policy, version };
    },
  }),
  operation({
    method: "PUT",
    path: "/organizations/{id}/registration-policy",
    operationId: "registration.setPolicy",
    summary: "Replace an organization's registration policy (fields left out take their defaults); If-Match is the organization's ETag",
    tag: "registration",
    permission: "admin:org:update",
    params: IdParams,
    query: NoQuery,
    body: RegistrationPolicySchema,
    response: RegistrationPolicySchema,
    etag: true,
    handler: async ({ ctx, params, body, ifMatch }) => {
      const { before, policy, version } = await setRegistrationPolicy(ctx, params.id, body, ifMatch);
      ctx.audit({
        eventType: "organization.registration_policy_updated",
        organizationId: params.id,
        targetType: "organization",
        targetId: params.id,
        data: { change: body },
        changes: { before, after: policy },
      });
      return { body: policy, version };
    },
  }),
];

/** /organizations/{id}/registration-tokens */
export const registrationTokensOperations = [
  operation({
    method: "GET",
    path: "/organizations/{id}/registration-tokens",
    operationId: "registration.listTokens",
    summary: "An organization's initial access tokens for client registration (values are never shown again)",
    tag: "registration",
    permission: "admin:client:read",
    params: IdParams,
    query: ListQuerySchema.strict(),
    response: pageOf(RegistrationTokenSchema),
    handler: async ({ ctx, params, query }) => ({ body: await listRegistrationTokens(ctx, params.id, query) }),
  }),
  operation({
    method: "POST",
    path: "/organizations/{id}/registration-tokens",
    operationId: "registration.createToken",
    summary: "Issue an initial access token (RFC 7591 §3); its value is in this response and never shown again",
    tag: "registration",
    permission: "admin:client:write",
    params: IdParams,
    query: NoQuery,
    body: RegistrationTokenCreateSchema,
    response: CreatedRegistrationTokenSchema,
    successStatus: 201,
    handler: async ({ ctx, params, body }) => {
      const { row, value } = await createRegistrationToken(ctx, params.id, body);
      ctx.audit({ eventType: "registration_token.created", organizationId: params.id, targetType: "registration_token", targetId: row.id, data: { change: body, hint: row.hint } });
      return { body: { ...toRegistrationToken(row), token: value } };
    },
  }),
  operation({
    method: "DELETE",
    path: "/organizations/{id}/registration-tokens/{tokenId}",
    operationId: "registration.revokeToken",
    summary: "Revoke an initial access token at once (clients it registered stay)",
    tag: "registration",
    permission: "admin:client:write",
    params: TokenParams,
    query: NoQuery,
    response: RegistrationTokenSchema,
    handler: async ({ ctx, params }) => {
      const row = await revokeRegistrationToken(ctx, params.id, params.tokenId);
      ctx.audit({ eventType: "registration_token.revoked", organizationId: params.id, targetType: "registration_token", targetId: row.id, data: { hint: row.hint, label: row.label } });
      return { body: toRegistrationToken(row) };
    },
  }),
];
