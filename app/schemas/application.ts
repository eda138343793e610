import { z } from "zod";
import { UuidSchema } from "~/schemas/uuid";

/** Application and module shapes shared by the Admin API, its OpenAPI document and the console. */
export const APPLICATION_STATUS_VALUES = ["active", "inactive"] as const;

export const NameSchema = z.string().trim().min(1, "must not be empty").max(200, "must have at most 200 characters");
export const DescriptionSchema = z.string().trim().max(2000, "must have at most 2000 characters");

export const ApplicationSchema = z.object({
  id: z.uuid(),
  organizationId: z.uuid(),
  name: z.string(),
  description: z.string().nullable(),
  status: z.enum(APPLICATION_STATUS_VALUES),
  createdAt: z.iso.datetime(),
  updatedAt: z.iso.datetime(),
});

export const ApplicationCreateSchema = z
  .object({
    organizationId: UuidSchema,
    name: NameSchema,
    description: DescriptionSchema.nullable().optional(),
  })
  .strict();

export const ApplicationUpdateSchema = z
  .object({
    name: NameSchema.optional(),
    description: DescriptionSchema.nullable().optional(),
  })
  .strict();

export const ModuleSchema = z.object({
  id: z.uuid(),
  applicationId: z.uuid(),
  name: z.string(),
  description: z.string().nullable(),
  status: z.enum(APPLICATION_STATUS_VALUES),
  createdAt: z.iso.datetime(),
  updatedAt: z.iso.datetime(),
});

export const ModuleCreateSchema = z
  .object({
    name: NameSchema,
    description: DescriptionSchema.nullable().optional(),
  })
  .strict();

/** `status: "active"` re-activates a deactivated module. */
export const ModuleUpdateSchema = z
  .object({
    name: NameSchema.optional(),
    description: DescriptionSchema.nullable().optional(),
    status: z.enum(APPLICATION_STATUS_VALUES).optional(),
  })
  .strict();

export type Application = z.infer<typeof ApplicationSchema>;
export type ApplicationCreate = z.infer<typeof ApplicationCreateSchema>;
export type ApplicationUpdate = z.infer<typeof ApplicationUpdateSchema>;
export type ApplicationModule = z.infer<typeof ModuleSchema>;
export type ModuleCreate = z.infer<typeof ModuleCreateSchema>;
export type ModuleUpdate = z.infer<typeof ModuleUpdateSchema>;
