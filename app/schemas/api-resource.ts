import { z } from "zod";
import { AccessTokenTtlSchema, isScopeToken } from "./client";

/**
 * API resource shapes shared by the Admin API, its OpenAPI document and the CLI (decision 077):
 * an organization's API that clients ask access tokens for with RFC 8707's `resource`, the
 * scopes it defines, and which client may ask for which of them.
 */
export const API_RESOURCE_STATUS_VALUES = ["active", "inactive"] as const;

export const API_RESOURCE_IDENTIFIER_MAX = 2000;
const MAX_SCOPES = 100;

// eslint-disable-next-line no-control-regex -- finding control characters is the point
const CONTROL_OR_SPACE = /[\u0000-\u0020\u007F-\u009F]/;

/**
 * A resource indicator (RFC 8707 §2): an absolute http(s) URI without a fragment. It is kept as
 * written and compared exactly, case included, since a client sends it back byte for byte.
 */
export const ApiResourceIdentifierSchema = z
  .string()
  .max(API_RESOURCE_IDENTIFIER_MAX, `must have at most ${API_RESOURCE_IDENTIFIER_MAX} characters`)
  .refine((value) => !CONTROL_OR_SPACE.test(value), "must not contain spaces or control characters")
  .refine((value) => /^[A-Za-z][A-Za-z0-9+.-]*:/.test(value) && URL.canParse(value), "must be an absolute URI")
  .refine((value) => !URL.canParse(value) || /^https?:\/\//i.test(value), "must be an http or https URI")
  .refine((value) => !value.includes("#"), "must not contain a fragment");

const ScopeTokenSchema = z.string().refine(isScopeToken, "must be a scope token (printable ASCII without space, quote or backslash, at most 100 characters)");

/** Scope tokens, without repeats; order is kept as given. */
export const ApiResourceScopesSchema = z
  .array(ScopeTokenSchema)
  .max(MAX_SCOPES, `must have at most ${MAX_SCOPES} entries`)
  .refine((a) => new Set(a).size === a.length, "must not repeat a scope");

/** Scope token → what it lets a client do, for people; every key must be one of the resource's scopes (the service checks). */
export const ApiResourceScopeDescriptionsSchema = z
  .record(z.string(), z.string().trim().min(1, "must not be empty").max(300, "must have at most 300 characters"))
  .refine((record) => Object.keys(record).length <= MAX_SCOPES, `must have at most ${MAX_SCOPES} entries`);

export const ApiResourceNameSchema = z.string().trim().min(1, "must not be empty").max(200, "must have at most 200 characters");

export const ApiResourceSchema = z.object({
  id: z.uuid(),
  organizationId: z.uuid(),
  identifier: z.string().describe("The resource indicator clients send as `resource`, and the access tokens' `aud`"),
  name: z.string(),
  scopes: z.array(z.string()).describe("The permissions the API defines, as scope tokens"),
  scopeDescriptions: z.record(z.string(), z.string()).describe("What each scope lets a client do, for people; scopes without one are absent"),
  accessTokenTtlSeconds: z.number().int().nullable().describe("Lifetime of its access tokens; null: the client's or the organization's"),
  consentRequired: z.boolean(),
  openToDynamicClients: z
    .boolean()
    .describe("Clients registered at the organization's registration endpoint (RFC 7591) may ask for it without a grant; the person is always asked"),
  status: z.enum(API_RESOURCE_STATUS_VALUES),
  createdAt: z.iso.datetime(),
  updatedAt: z.iso.datetime(),
});
export type ApiResource = z.infer<typeof ApiResourceSchema>;

export const ApiResourceCreateSchema = z
  .object({
    identifier: ApiResourceIdentifierSchema,
    name: ApiResourceNameSchema,
    scopes: ApiResourceScopesSchema.default([]),
    scopeDescriptions: ApiResourceScopeDescriptionsSchema.default({}),
    accessTokenTtlSeconds: AccessTokenTtlSchema.nullable().default(null),
    consentRequired: z.boolean().default(true),
    openToDynamicClients: z.boolean().default(false),
    status: z.enum(API_RESOURCE_STATUS_VALUES).default("active"),
  })
  .strict();
export type ApiResourceCreate = z.infer<typeof ApiResourceCreateSchema>;

export const ApiResourceUpdateSchema = z
  .object({
    identifier: ApiResourceIdentifierSchema.optional(),
    name: ApiResourceNameSchema.optional(),
    scopes: ApiResourceScopesSchema.optional(),
    /** Replaces the descriptions; without it, descriptions of scopes an update drops go with them. */
    scopeDescriptions: ApiResourceScopeDescriptionsSchema.optional(),
    accessTokenTtlSeconds: AccessTokenTtlSchema.nullable().optional(),
    consentRequired: z.boolean().optional(),
    openToDynamicClients: z.boolean().optional(),
    status: z.enum(API_RESOURCE_STATUS_VALUES).optional(),
  })
  .strict();
export type ApiResourceUpdate = z.infer<typeof ApiResourceUpdateSchema>;

/** What a client may ask of one resource. */
export const ClientResourceGrantSchema = z.object({
  clientId: z.string(),
  resourceId: z.uuid(),
  identifier: z.string(),
  scopes: z.array(z.string()),
  createdAt: z.iso.datetime(),
  updatedAt: z.iso.datetime(),
});
export type ClientResourceGrant = z.infer<typeof ClientResourceGrantSchema>;

/** The scopes of the resource the client may ask for: a subset of the resource's (the service checks). */
export const ClientResourceGrantBodySchema = z.object({ scopes: ApiResourceScopesSchema }).strict();
export type ClientResourceGrantBody = z.infer<typeof ClientResourceGrantBodySchema>;
