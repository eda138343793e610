import { z } from "zod";

/** Custom claim shapes shared by the Admin API, its OpenAPI document and the console. */
export const CLAIM_TYPE_VALUES = ["string", "number", "boolean", "json"] as const;
export type ClaimType = (typeof CLAIM_TYPE_VALUES)[number];

/**
 * Names a custom claim may not take: the registered JWT claims, the OpenID Connect standard and
 * ID token claims, and the claims Porta itself issues.
 */
export const RESERVED_CLAIM_NAMES = new Set(
  [
    "iss", "sub", "aud", "exp", "nbf", "iat", "jti",
    "name", "given_name", "family_name", "middle_name", "nickname", "preferred_username", "profile", "picture", "website",
    "email", "email_verified", "gender", "birthdate", "zoneinfo", "locale", "phone_number", "phone_number_verified", "address", "updated_at",
    "auth_time", "nonce", "acr", "amr", "azp", "at_hash", "c_hash", "s_hash", "sid", "typ", "cnf", "act", "may_act", "events",
    "scope", "client_id", "roles", "permissions", "groups", "organization", "organization_id", "org_id", "tenant", "kid", "alg",
  ].map((n) => n.toLowerCase()),
);

/** Scopes a custom claim cannot be released by: openid always applies, offline_access releases no claims. */
export const RESERVED_CLAIM_SCOPES = new Set(["openid", "offline_access"]);

export const ClaimNameSchema = z
  .string()
  .trim()
  .min(1, "must not be empty")
  .max(64, "must have at most 64 characters")
  .regex(/^[A-Za-z][A-Za-z0-9_]*$/, "must start with a letter and contain letters, digits and underscores only")
  .refine((name) => !RESERVED_CLAIM_NAMES.has(name.toLowerCase()), "is a standard claim name and cannot be redefined");

export const ClaimScopeSchema = z
  .string()
  .trim()
  .min(1, "must not be empty")
  .max(64, "must have at most 64 characters")
  .regex(/^[A-Za-z0-9][A-Za-z0-9_.:-]*$/, "must be one scope token of letters, digits, _ . : -")
  .refine((scope) => !RESERVED_CLAIM_SCOPES.has(scope), "cannot release custom claims");

const DescriptionSchema = z.string().trim().max(2000, "must have at most 2000 characters");

export const CustomClaimSchema = z.object({
  id: z.uuid(),
  applicationId: z.uuid(),
  claimName: z.string(),
  claimType: z.enum(CLAIM_TYPE_VALUES),
  scope: z.string(),
  description: z.string().nullable(),
  createdAt: z.iso.datetime(),
  updatedAt: z.iso.datetime(),
});

export const CustomClaimCreateSchema = z
  .object({
    claimName: ClaimNameSchema,
    claimType: z.enum(CLAIM_TYPE_VALUES),
    scope: ClaimScopeSchema,
    description: DescriptionSchema.nullable().optional(),
  })
  .strict();

export const CustomClaimUpdateSchema = z
  .object({
    claimName: ClaimNameSchema.optional(),
    claimType: z.enum(CLAIM_TYPE_VALUES).optional(),
    scope: ClaimScopeSchema.optional(),
    description: DescriptionSchema.nullable().optional(),
  })
  .strict();

export const MAX_CLAIM_VALUE_BYTES = 8_000;
export const MAX_STRING_CLAIM_LENGTH = 2_000;

export const ClaimValueBodySchema = z
  .object({
    value: z
      .json({ message: "must be a JSON value" })
      .refine((v) => v !== null, "must not be null (DELETE removes a value)")
      .refine((v) => JSON.stringify(v).length <= MAX_CLAIM_VALUE_BYTES, `must have at most ${MAX_CLAIM_VALUE_BYTES} characters as JSON`),
  })
  .strict();

export const ClaimValueSchema = z.object({
  claimId: z.uuid(),
  userId: z.uuid(),
  applicationId: z.uuid(),
  claimName: z.string(),
  claimType: z.enum(CLAIM_TYPE_VALUES),
  scope: z.string(),
  value: z.json(),
  updatedAt: z.iso.datetime(),
});

/** Why a value does not fit the claim's type, or undefined when it does. */
export function claimValueProblem(type: ClaimType, value: unknown): string | undefined {
  switch (type) {
    case "string":
      if (typeof value !== "string") return "must be a string";
      return value.length > MAX_STRING_CLAIM_LENGTH ? `must have at most ${MAX_STRING_CLAIM_LENGTH} characters` : undefined;
    case "number":
      return typeof value === "number" && Number.isFinite(value) ? undefined : "must be a number";
    case "boolean":
      return typeof value === "boolean" ? undefined : "must be a boolean";
    case "json":
      return value === null || value === undefined ? "must be a JSON value" : undefined;
  }
}

export type CustomClaim = z.infer<typeof CustomClaimSchema>;
export type CustomClaimCreate = z.infer<typeof CustomClaimCreateSchema>;
export type CustomClaimUpdate = z.infer<typeof CustomClaimUpdateSchema>;
export type ClaimValue = z.infer<typeof ClaimValueSchema>;
