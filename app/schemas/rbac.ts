import { z } from "zod";
import { UuidSchema } from "~/schemas/uuid";

/** Roles, permissions and role assignments of an organization (Admin API and console). */
const NAME_PATTERN = /^[A-Za-z0-9][A-Za-z0-9_.:-]*$/;
/** A role's name may also hold single spaces between words: directory groups ("Sales Team") arrive as roles by SCIM and SAML. */
const ROLE_NAME_PATTERN = /^[A-Za-z0-9](?:[A-Za-z0-9_.:-]| (?! ))*$/;

/** A permission's name: it is also an OAuth scope (a role grants the scope of the same name), so no spaces. */
export const RbacNameSchema = z
  .string()
  .trim()
  .min(1, "must not be empty")
  .max(100, "must have at most 100 characters")
  .regex(NAME_PATTERN, "may contain letters, digits and _ . : - only, starting with a letter or digit");

export const RoleNameSchema = z
  .string()
  .trim()
  .min(1, "must not be empty")
  .max(100, "must have at most 100 characters")
  .regex(ROLE_NAME_PATTERN, "may contain letters, digits, single spaces and _ . : - only, starting with a letter or digit");

export const RbacDescriptionSchema = z.string().trim().max(500, "must have at most 500 characters");

export const PermissionSchema = z.object({
  id: z.uuid(),
  organizationId: z.uuid(),
  name: z.string(),
  description: z.string().nullable(),
  createdAt: z.iso.datetime(),
});

export const RoleSchema = z.object({
  id: z.uuid(),
  organizationId: z.uuid(),
  name: z.string(),
  description: z.string().nullable(),
  permissions: z.array(z.object({ id: z.uuid(), name: z.string() })),
  /** One of the roles every organization has for its own administration (`org-admin`, `org-auditor`): made with it, never renamed, not part of configuration files. */
  builtIn: z.boolean(),
  createdAt: z.iso.datetime(),
  updatedAt: z.iso.datetime(),
});

export const RoleCreateSchema = z
  .object({
    organizationId: UuidSchema,
    name: RoleNameSchema,
    description: RbacDescriptionSchema.optional(),
    /** Ids of permissions of the same organization. */
    permissionIds: z.array(UuidSchema).max(500).optional(),
  })
  .strict();

export const RoleUpdateSchema = z
  .object({
    name: RoleNameSchema.optional(),
    description: RbacDescriptionSchema.nullable().optional(),
  })
  .strict();

export const PermissionCreateSchema = z
  .object({
    organizationId: UuidSchema,
    name: RbacNameSchema,
    description: RbacDescriptionSchema.optional(),
  })
  .strict();

export const UserRoleSchema = z.object({
  id: z.uuid(),
  organizationId: z.uuid(),
  name: z.string(),
  description: z.string().nullable(),
  assignedAt: z.iso.datetime(),
});

export const EffectivePermissionsSchema = z.object({
  userId: z.uuid(),
  organizationId: z.uuid(),
  roles: z.array(z.string()),
  permissions: z.array(z.object({ id: z.uuid(), name: z.string(), description: z.string().nullable(), grantedBy: z.array(z.string()) })),
});

export type Permission = z.infer<typeof PermissionSchema>;
export type Role = z.infer<typeof RoleSchema>;
export type RoleCreate = z.infer<typeof RoleCreateSchema>;
export type RoleUpdate = z.infer<typeof RoleUpdateSchema>;
export type PermissionCreate = z.infer<typeof PermissionCreateSchema>;
export type UserRole = z.infer<typeof UserRoleSchema>;
export type EffectivePermissions = z.infer<typeof EffectivePermissionsSchema>;
