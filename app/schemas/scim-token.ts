import { z } from "zod";

/**
 * The bearer tokens of an organization's SCIM 2.0 endpoint (decision 084), as the Admin API
 * shows them. The value is in the creating response only; the list shows its prefix.
 */
export const SCIM_TOKEN_PREFIX = "porta_scim_";
export const MAX_SCIM_TOKEN_DAYS = 365;
export const DEFAULT_SCIM_TOKEN_DAYS = 90;

export const ScimTokenSchema = z.object({
  id: z.uuid(),
  organizationId: z.uuid(),
  name: z.string(),
  /** `porta_scim_` and the value's first four characters: enough to tell tokens apart, nothing to guess with. */
  prefix: z.string(),
  /** active, or why the token no longer opens the SCIM endpoint. */
  status: z.enum(["active", "expired", "revoked"]),
  expiresAt: z.iso.datetime(),
  revokedAt: z.iso.datetime().nullable(),
  lastUsedAt: z.iso.datetime().nullable(),
  createdBy: z.string().nullable(),
  createdAt: z.iso.datetime(),
});

/** The token's value is in this one response and never again (only its SHA-256 is kept). */
export const CreatedScimTokenSchema = ScimTokenSchema.extend({
  token: z.string(),
});

export const ScimTokenCreateSchema = z
  .object({
    name: z
      .string()
      .trim()
      .min(1, "must not be empty")
      .max(100, "must have at most 100 characters"),
    /** Default 90 days; at most a year: a provisioning client's token is rotated, never forever. */
    expiresInDays: z
      .number()
      .int("must be a whole number of days")
      .min(1, "must be at least 1 day")
      .max(MAX_SCIM_TOKEN_DAYS, `must be at most ${MAX_SCIM_TOKEN_DAYS} days`)
      .default(DEFAULT_SCIM_TOKEN_DAYS),
  })
  .strict();

export type ScimToken = z.infer<typeof ScimTokenSchema>;
export type CreatedScimToken = z.infer<typeof CreatedScimTokenSchema>;
export type ScimTokenCreate = z.infer<typeof ScimTokenCreateSchema>;
