import { z } from "zod";
import { UuidSchema } from "~/schemas/uuid";
import { SUPPORTED_LANGUAGES } from "~/i18n/config";
import { EmailSchema } from "./email";
import { ImportedPasswordHashSchema, PasswordSchemeSchema } from "./imported-password-hash";

/** User shapes shared by the Admin API, its OpenAPI document and the console. Never a password hash. */
export const USER_STATUS_VALUES = ["active", "inactive"] as const;


const PersonNameSchema = z.string().trim().min(1, "must not be empty").max(200, "must have at most 200 characters");
export const UserLocaleSchema = z.enum(SUPPORTED_LANGUAGES);
/** The policy (checkNewPassword) decides; this bound only keeps absurd input away from it. */
export const NewPasswordSchema = z.string().max(4096, "must have at most 4096 characters");

/** What a person edits about themselves on the account page; an empty field clears it. */
const OwnNameSchema = z
  .string()
  .trim()
  .max(200)
  .transform((value) => value || null);
export const AccountProfileSchema = z.object({
  givenName: OwnNameSchema,
  familyName: OwnNameSchema,
  locale: z.union([UserLocaleSchema, z.literal("").transform(() => null)]),
});

export const UserSchema = z.object({
  id: z.uuid(),
  organizationId: z.uuid(),
  email: z.string(),
  givenName: z.string().nullable(),
  familyName: z.string().nullable(),
  emailVerified: z.boolean(),
  status: z.enum(USER_STATUS_VALUES),
  locale: z.string().nullable(),
  hasPassword: z.boolean(),
  /** `argon2id`, or `imported:<family>` (e.g. `imported:bcrypt`) until the imported password first signs in; null without a password (decision 085). */
  passwordScheme: PasswordSchemeSchema.nullable(),
  lockedUntil: z.iso.datetime().nullable(),
  lastLoginAt: z.iso.datetime().nullable(),
  createdAt: z.iso.datetime(),
  updatedAt: z.iso.datetime(),
});

/**
 * What refuses a person now, each with when it ends (null: until someone clears it, or the person
 * signs in another way). `lockout`: wrong passwords locked the account for browsers without its
 * device cookie; `account_limit` / `address_limit`: a rate-limit window of the account or of a
 * client address the person used recently is used up; `device`: one browser's device cookie is
 * locked after its own wrong passwords; `factor`: a second factor had too many wrong codes in a row.
 */
export const USER_BLOCK_KINDS = ["lockout", "account_limit", "address_limit", "device", "factor"] as const;
/** The actions a rate limit that can hold a person counts. */
export const USER_BLOCK_LIMITS = ["passwordLogin", "magicLink", "passwordReset", "emailChange", "twoFactor", "emailOtpResend", "passkeyLogin", "federatedLogin"] as const;
export const USER_BLOCK_FACTORS = ["totp", "email"] as const;

export const UserBlockSchema = z.object({
  /** Names the block for `DELETE …/blocks/{blockId}`. */
  id: z.string(),
  kind: z.enum(USER_BLOCK_KINDS),
  /** For the rate limits: the action they count. */
  limit: z.enum(USER_BLOCK_LIMITS).nullable(),
  /** The configuration entry whose rule the block follows. */
  setting: z.string(),
  /** For `address_limit`: the client address. */
  address: z.string().nullable(),
  /** For `factor`: the second factor refused. */
  factor: z.enum(USER_BLOCK_FACTORS).nullable(),
  until: z.iso.datetime().nullable(),
});

/** A block's id: `lockout`, `limit:<limit>`, `limit:<limit>:<address>`, `device:<16 hex>` or `factor:<factor>`. */
export const UserBlockIdSchema = z
  .string()
  .max(200, "must have at most 200 characters")
  .regex(/^(lockout|limit:[A-Za-z]+(:[0-9A-Za-z.:%_-]+)?|device:[0-9a-f]{16}|factor:(totp|email))$/, "is not the id of a block (see the user's blocks)");

/** One user as a single read answers it: with what refuses them now. */
export const UserDetailSchema = UserSchema.extend({ blocks: z.array(UserBlockSchema) });

export const UserCreateSchema = z
  .object({
    /** Optional: the path names the organization; when sent it must agree. */
    organizationId: UuidSchema.optional(),
    email: EmailSchema,
    givenName: PersonNameSchema.optional(),
    familyName: PersonNameSchema.optional(),
    password: NewPasswordSchema.optional(),
    /** A password hash from another system instead of `password` (decision 085): wrapped at once, replaced at the first sign-in. */
    importedPasswordHash: ImportedPasswordHashSchema.optional(),
    /** Admits md5-crypt, plain or salted MD5 and SHA-1; the audit entry marks the import weak. */
    allowWeakLegacyHashes: z.boolean().optional(),
    emailVerified: z.boolean().optional(),
    locale: UserLocaleSchema.optional(),
  })
  .strict();

/** Fields an administrator may change; null clears a name or the locale. */
export const UserUpdateSchema = z
  .object({
    email: EmailSchema.optional(),
    givenName: PersonNameSchema.nullable().optional(),
    familyName: PersonNameSchema.nullable().optional(),
    emailVerified: z.boolean().optional(),
    locale: UserLocaleSchema.nullable().optional(),
  })
  .strict();

export const SetPasswordSchema = z.object({ password: NewPasswordSchema }).strict();

/** An administrator's report that a user's password is compromised: an optional note (kept in the audit entry, sent as the SET's reason_admin). */
export const ReportCompromisedPasswordSchema = z
  .object({ reason: z.string().trim().max(500, "must have at most 500 characters").optional() })
  .strict()
  .optional();

/** Which imported passwords an operator expires: those of users created before the date (decision 085). */
export const ExpireImportedPasswordsSchema = z.object({ createdBefore: z.iso.datetime({ offset: true, message: "must be an ISO 8601 date and time" }) }).strict();
export const ExpiredImportedPasswordsSchema = z.object({ expired: z.number().int() });

/** An administrator's impersonation (decision 053): at most an hour, always with a reason the person will see. */
export const MAX_IMPERSONATION_MINUTES = 60;
export const ImpersonateSchema = z
  .object({
    /** The client (of the user's organization) the token is for. */
    clientId: z.string().trim().min(1, "must not be empty").max(200, "must have at most 200 characters"),
    reason: z.string().trim().min(3, "must say why, in at least 3 characters").max(500, "must have at most 500 characters"),
    minutes: z
      .number({ message: "must be a number of minutes" })
      .int("must be a whole number of minutes")
      .min(1, "must be at least 1 minute")
      .max(MAX_IMPERSONATION_MINUTES, `must be at most ${MAX_IMPERSONATION_MINUTES} minutes`)
      .default(15),
  })
  .strict();

/** The token an impersonation issued: shown in this one response, never stored in the clear. */
export const ImpersonationSchema = z.object({
  accessToken: z.string(),
  tokenType: z.literal("Bearer"),
  expiresIn: z.number().int(),
  expiresAt: z.iso.datetime(),
  clientId: z.string(),
  scope: z.string(),
});

const RoleNameRef = z.string().trim().min(1).max(100, "must have at most 100 characters");

export const InviteSchema = z
  .object({
    organizationId: UuidSchema.optional(),
    email: EmailSchema,
    givenName: PersonNameSchema.optional(),
    familyName: PersonNameSchema.optional(),
    /** Names of roles of the organization, granted when the invitation is accepted. */
    roles: z.array(RoleNameRef).max(50, "must name at most 50 roles").optional(),
    /** Language of the invitation mail and the new account. */
    locale: UserLocaleSchema.optional(),
  })
  .strict();

export const InvitationOutcomeSchema = z.object({
  invitationId: z.uuid(),
  email: z.string(),
  invitationSent: z.boolean(),
  expiresAt: z.iso.datetime(),
});

/** An invitation not accepted yet, as the users page lists it (an expired one can be resent). */
export const InvitationSchema = z.object({
  id: z.uuid(),
  organizationId: z.uuid(),
  email: z.string(),
  givenName: z.string().nullable(),
  familyName: z.string().nullable(),
  roles: z.array(z.string()),
  language: z.string(),
  /** The inviting administrator's email, as the mail names them. */
  invitedBy: z.string().nullable(),
  createdAt: z.iso.datetime(),
  expiresAt: z.iso.datetime(),
  expired: z.boolean(),
});

export const InvitationPreviewSchema = z.object({ to: z.string(), subject: z.string(), html: z.string(), text: z.string() });

export const UserExportSchema = z.object({
  exportedAt: z.iso.datetime(),
  user: UserSchema,
  organization: z.object({ id: z.uuid(), slug: z.string(), name: z.string() }),
  /** The provisioning client's id for the user (SCIM externalId, decision 084), when one provisioned them. */
  scimExternalId: z.string().nullable(),
  roles: z.array(z.object({ id: z.uuid(), name: z.string(), description: z.string().nullable(), assignedAt: z.iso.datetime() })),
  permissions: z.array(z.string()),
  claimValues: z.array(
    z.object({ claimId: z.uuid(), claimName: z.string(), claimType: z.string(), applicationId: z.uuid(), applicationName: z.string(), value: z.unknown(), updatedAt: z.iso.datetime() }),
  ),
  twoFactor: z.object({
    totp: z.object({ status: z.enum(["none", "pending", "enrolled"]), enrolledAt: z.iso.datetime().nullable() }),
    emailOtpEnabled: z.boolean(),
    recoveryCodes: z.object({ total: z.number().int(), remaining: z.number().int() }),
  }),
  invitations: z.array(z.object({ id: z.uuid(), createdAt: z.iso.datetime(), acceptedAt: z.iso.datetime().nullable(), roles: z.array(z.string()) })),
  tokens: z.array(z.object({ model: z.string(), createdAt: z.iso.datetime(), expiresAt: z.iso.datetime().nullable() })),
  auditEntries: z.array(
    z.object({
      id: z.uuid(),
      createdAt: z.iso.datetime(),
      eventType: z.string(),
      actorType: z.string(),
      actorId: z.string().nullable(),
      targetType: z.string().nullable(),
      targetId: z.string().nullable(),
      ip: z.string().nullable(),
      data: z.unknown(),
    }),
  ),
  auditEntriesTruncated: z.boolean(),
});

export type User = z.infer<typeof UserSchema>;
export type UserBlock = z.infer<typeof UserBlockSchema>;
export type UserDetail = z.infer<typeof UserDetailSchema>;
export type UserCreate = z.infer<typeof UserCreateSchema>;
export type UserUpdate = z.infer<typeof UserUpdateSchema>;
export type Invite = z.infer<typeof InviteSchema>;
export type Invitation = z.infer<typeof InvitationSchema>;
export type UserExport = z.infer<typeof UserExportSchema>;
