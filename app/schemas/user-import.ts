import { z } from "zod";
import { MAX_IMPORT_BYTES } from "./transfer";
import { UuidSchema } from "./uuid";

/**
 * Imports of users from another identity system's export into one organization (decision 087):
 * a Keycloak realm export (`kc.sh export`, JSON), an Auth0 bulk user export (NDJSON, with
 * Auth0's bcrypt password hash export merged into its lines), or Porta's own user list as CSV or
 * JSON (the columns below) for any other source.
 */
export const USER_IMPORT_FORMATS = ["keycloak", "auth0", "csv", "json"] as const;

/** The columns of a CSV user list and the keys of a JSON one (docs/migration.md). */
export const GENERIC_USER_IMPORT_COLUMNS = ["email", "given_name", "family_name", "email_verified", "active", "password_hash", "roles", "external_id", "totp_secret"] as const;

export const UserImportRequestSchema = z
  .object({
    format: z.enum(USER_IMPORT_FORMATS),
    /** The export file as text (JSON for Keycloak, one JSON object a line for Auth0). */
    data: z.string().min(1, "must not be empty").max(MAX_IMPORT_BYTES, `must have at most ${MAX_IMPORT_BYTES} characters`),
    /**
     * Auth0 only: values of a user's `user_metadata` or `app_metadata` to carry into custom claims
     * of the organization's applications, by dotted path (`user_metadata.plan`).
     */
    claims: z
      .array(
        z
          .object({
            source: z.string().regex(/^(user_metadata|app_metadata)(\.[A-Za-z0-9_$-]{1,100}){1,8}$/, "must be a dotted path in user_metadata or app_metadata, like user_metadata.plan"),
            claimId: UuidSchema,
          })
          .strict(),
      )
      .max(50, "must have at most 50 mappings")
      .optional(),
  })
  .strict()
  .refine((request) => request.claims === undefined || request.format === "auth0", { path: ["claims"], message: "maps Auth0 metadata, so it needs format auth0" });

/** Why a row of the source was not imported. */
export const USER_IMPORT_SKIP_REASONS = ["no_email", "invalid_email", "duplicate_email", "unsupported_credential", "invalid_role_name"] as const;

export const UserImportSkipSchema = z.object({
  /** The row's position in the source's user list (0-based; for Auth0 the line's; for a role its position among the source's roles). */
  row: z.number().int(),
  /** The source's own id of the row: Keycloak's username, Auth0's user_id, a list's external_id, or a role's name. */
  sourceId: z.string().nullable(),
  email: z.string().nullable(),
  reason: z.enum(USER_IMPORT_SKIP_REASONS),
  /** What Porta found wrong, never the hash itself. */
  detail: z.string().optional(),
});

export const UserImportReportSchema = z.object({
  format: z.enum(USER_IMPORT_FORMATS),
  /** Rows that are users with an address (before the skips below). */
  total: z.number().int(),
  created: z.number().int(),
  /** Existing users (same address) whose names, verification or roles the source changed. */
  updated: z.number().int(),
  unchanged: z.number().int(),
  skipped: z.array(UserImportSkipSchema),
  /** Roles the import creates (or created) in the organization. */
  rolesCreated: z.array(z.string()),
  /** Users created with an imported password hash (they sign in with their old password). */
  importedPasswords: z.number().int(),
  /** Users created with their authenticator app's TOTP secret (their codes keep working). */
  importedTotp: z.number().int(),
  /** One-time-password credentials of new users that Porta cannot check (the users enroll again). */
  totpNotCarried: z.array(z.object({ row: z.number().int(), sourceId: z.string().nullable(), email: z.string(), detail: z.string() })),
  /**
   * The source's clients (Keycloak): created with new ids and secrets (apply only: each secret is
   * shown here once), already there by name, or skipped with the reason.
   */
  clients: z.array(
    z.object({
      sourceId: z.string(),
      name: z.string(),
      outcome: z.enum(["create", "created", "exists", "skipped"]),
      clientId: z.string().optional(),
      clientSecret: z.string().optional(),
      detail: z.string().optional(),
    }),
  ),
  /** New users' custom claim values carried from Auth0 metadata. */
  claimValues: z.number().int(),
  /** Metadata values a claim's type refuses (the users import without them). */
  claimValuesRefused: z.array(z.object({ row: z.number().int(), sourceId: z.string().nullable(), source: z.string(), detail: z.string() })),
  /** Apply only: the transactions the import committed. */
  batches: z.number().int().optional(),
});

export type UserImportRequest = z.infer<typeof UserImportRequestSchema>;
export type UserImportReport = z.infer<typeof UserImportReportSchema>;
export type UserImportSkip = z.infer<typeof UserImportSkipSchema>;
export type UserImportSkipReason = (typeof USER_IMPORT_SKIP_REASONS)[number];
