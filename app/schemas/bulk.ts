import { z } from "zod";
import { UuidSchema } from "~/schemas/uuid";
import { RoleNameSchema } from "./rbac";
import { UserCreateSchema, UserSchema, UserUpdateSchema } from "./user";

/**
 * POST /bulk: a batch of user operations in one organization, applied all-or-nothing (one
 * transaction; the first failure rolls everything back) or best-effort (each item on its own,
 * with a result per item).
 */
export const MAX_BULK_OPERATIONS = 500;
export const BULK_MODES = ["all_or_nothing", "best_effort"] as const;
/** The columns a console CSV file may have (no password: plaintext passwords never travel in files). */
export const BULK_CSV_COLUMNS = ["op", "userId", "email", "givenName", "familyName", "locale", "emailVerified", "roleName", "roleId"] as const;

const UserRef = { userId: UuidSchema };

export const BulkOperationSchema = z.discriminatedUnion("op", [
  UserCreateSchema.omit({ organizationId: true }).extend({ op: z.literal("create") }).strict(),
  UserUpdateSchema.extend({ op: z.literal("update"), ...UserRef }).strict(),
  z.object({ op: z.literal("activate"), ...UserRef }).strict(),
  z.object({ op: z.literal("deactivate"), ...UserRef }).strict(),
  z.object({ op: z.literal("delete"), ...UserRef }).strict(),
  z
    .object({ op: z.literal("assignRole"), ...UserRef, roleId: UuidSchema.optional(), roleName: RoleNameSchema.optional() })
    .strict()
    .refine((o) => (o.roleId === undefined) !== (o.roleName === undefined), { message: "name the role by roleId or by roleName, not both", path: ["roleId"] }),
]);

export const BulkRequestSchema = z
  .object({
    organizationId: UuidSchema,
    mode: z.enum(BULK_MODES).default("all_or_nothing"),
    operations: z.array(BulkOperationSchema).min(1, "needs at least one operation").max(MAX_BULK_OPERATIONS, `must have at most ${MAX_BULK_OPERATIONS} operations`),
  })
  .strict();

export const BulkItemResultSchema = z.object({
  index: z.number().int(),
  op: z.string(),
  status: z.enum(["succeeded", "failed", "rolled_back", "not_run"]),
  user: UserSchema.optional(),
  error: z
    .object({ status: z.number().int(), code: z.string(), message: z.string(), details: z.array(z.object({ field: z.string(), message: z.string() })).optional() })
    .optional(),
});

export const BulkResultSchema = z.object({
  mode: z.enum(BULK_MODES),
  applied: z.boolean().meta({ description: "all_or_nothing: whether the batch was committed; best_effort: whether any item succeeded" }),
  succeeded: z.number().int(),
  failed: z.number().int(),
  results: z.array(BulkItemResultSchema),
});

export type BulkOperation = z.infer<typeof BulkOperationSchema>;
/** A row as a caller sends it (the console sends CSV rows, which this schema then checks). */
export type BulkOperationInput = z.input<typeof BulkOperationSchema>;
export type BulkRequest = z.infer<typeof BulkRequestSchema>;
export type BulkItemResult = z.infer<typeof BulkItemResultSchema>;
export type BulkResult = z.infer<typeof BulkResultSchema>;
