import { z } from "zod";

/** Organization shapes shared by the Admin API, its OpenAPI document and the console. */
export const LOGIN_METHOD_VALUES = ["password", "magic_link"] as const;
export const TWO_FACTOR_POLICY_VALUES = ["optional", "required_email", "required_totp", "required_any"] as const;
export const ORGANIZATION_STATUS_VALUES = ["active", "suspended", "deleted"] as const;

/** Paths Porta itself uses at the top level; an organization cannot take them as its slug. */
export const RESERVED_SLUGS = new Set(["api", "admin", "console", "interaction", "health", "dev", "assets", "static", "public", "well-known", "oidc", "auth", "login", "logout", "porta"]);

/** Slugs are case-insensitive (citext): an upper-case slug is folded, so `Acme` names `acme`. */
export const SlugSchema = z
  .string()
  .trim()
  .toLowerCase()
  .min(2, "must have at least 2 characters")
  .max(63, "must have at most 63 characters")
  .regex(/^[a-z0-9](?:[a-z0-9-]*[a-z0-9])?$/, "may contain lower-case letters, digits and inner dashes only")
  .refine((s) => !RESERVED_SLUGS.has(s), "is reserved by Porta");

export const LoginMethodsSchema = z
  .array(z.enum(LOGIN_METHOD_VALUES))
  .min(1, "needs at least one login method")
  .max(2)
  .refine((a) => new Set(a).size === a.length, "must not repeat a method");

const NameSchema = z.string().trim().min(1, "must not be empty").max(200, "must have at most 200 characters");
const LocaleSchema = z.enum(["en", "de"]);

export const OrganizationSchema = z.object({
  id: z.uuid(),
  name: z.string(),
  slug: z.string(),
  status: z.enum(ORGANIZATION_STATUS_VALUES),
  defaultLoginMethods: z.array(z.enum(LOGIN_METHOD_VALUES)),
  twoFactorPolicy: z.enum(TWO_FACTOR_POLICY_VALUES),
  defaultLocale: z.string(),
  createdAt: z.iso.datetime(),
  updatedAt: z.iso.datetime(),
});

export const OrganizationCreateSchema = z
  .object({
    name: NameSchema,
    slug: SlugSchema,
    defaultLoginMethods: LoginMethodsSchema.optional(),
    twoFactorPolicy: z.enum(TWO_FACTOR_POLICY_VALUES).optional(),
    defaultLocale: LocaleSchema.optional(),
  })
  .strict();

export const OrganizationUpdateSchema = z
  .object({
    name: NameSchema.optional(),
    defaultLoginMethods: LoginMethodsSchema.optional(),
    twoFactorPolicy: z.enum(TWO_FACTOR_POLICY_VALUES).optional(),
    defaultLocale: LocaleSchema.optional(),
  })
  .strict();

export type Organization = z.infer<typeof OrganizationSchema>;
export type OrganizationCreate = z.infer<typeof OrganizationCreateSchema>;
export type OrganizationUpdate = z.infer<typeof OrganizationUpdateSchema>;
