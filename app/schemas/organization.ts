import { z } from "zod";
import { SUPPORTED_LANGUAGES } from "~/i18n/config";
import { LOGIN_METHODS } from "./login-methods";
import { SLUG_PATTERN } from "./slug";
import { TWO_FACTOR_POLICIES } from "./two-factor-policy";
import { BOT_CHALLENGE_COST, BotChallengeCostSchema, BotChallengePolicySchema } from "./bot-challenge";

/** Organization shapes shared by the Admin API, its OpenAPI document and the console. */
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
  .regex(SLUG_PATTERN, "may contain lower-case letters, digits and inner dashes only")
  .refine((s) => !RESERVED_SLUGS.has(s), "is reserved by Porta");

export const LoginMethodsSchema = z
  .array(z.enum(LOGIN_METHODS))
  .min(1, "needs at least one login method")
  .max(LOGIN_METHODS.length)
  .refine((a) => new Set(a).size === a.length, "must not repeat a method");

const NameSchema = z.string().trim().min(1, "must not be empty").max(200, "must have at most 200 characters");
const LocaleSchema = z.enum(SUPPORTED_LANGUAGES);

export const OrganizationSchema = z.object({
  id: z.uuid(),
  name: z.string(),
  slug: z.string(),
  status: z.enum(ORGANIZATION_STATUS_VALUES),
  defaultLoginMethods: z.array(z.enum(LOGIN_METHODS)),
  twoFactorPolicy: z.enum(TWO_FACTOR_POLICIES),
  defaultLocale: z.string(),
  /** OAuth 2.1 mode: every client must use PKCE S256, confidential ones too (decision 052). */
  oauth21: z.boolean(),
  /** Bot protection on the sign-in forms (decision 091): off, after failures (suspicion) or always. */
  botChallenge: BotChallengePolicySchema,
  /** The proof of work's maxnumber: SHA-256 hashes a browser computes at most (half on average). */
  botChallengeCost: z.number().int(),
  createdAt: z.iso.datetime(),
  updatedAt: z.iso.datetime(),
});

/**
 * What a new organization gets for each field its creator leaves out: the Admin API, the CLI and
 * the console's form all start from these (the spec: both login methods by default).
 */
export const NEW_ORGANIZATION_DEFAULTS = {
  defaultLoginMethods: ["password", "magic_link"],
  twoFactorPolicy: "optional",
  defaultLocale: "en",
  oauth21: true,
  botChallenge: "off",
  botChallengeCost: BOT_CHALLENGE_COST.default,
} as const satisfies {
  defaultLoginMethods: ReadonlyArray<(typeof LOGIN_METHODS)[number]>;
  twoFactorPolicy: (typeof TWO_FACTOR_POLICIES)[number];
  defaultLocale: string;
  oauth21: boolean;
  botChallenge: z.infer<typeof BotChallengePolicySchema>;
  botChallengeCost: number;
};

export const OrganizationCreateSchema = z
  .object({
    name: NameSchema,
    slug: SlugSchema,
    defaultLoginMethods: LoginMethodsSchema.optional(),
    twoFactorPolicy: z.enum(TWO_FACTOR_POLICIES).optional(),
    defaultLocale: LocaleSchema.optional(),
    /** On unless turned off: new organizations follow OAuth 2.1. */
    oauth21: z.boolean().optional(),
    botChallenge: BotChallengePolicySchema.optional(),
    botChallengeCost: BotChallengeCostSchema.optional(),
  })
  .strict();

export const OrganizationUpdateSchema = z
  .object({
    name: NameSchema.optional(),
    defaultLoginMethods: LoginMethodsSchema.optional(),
    twoFactorPolicy: z.enum(TWO_FACTOR_POLICIES).optional(),
    defaultLocale: LocaleSchema.optional(),
    oauth21: z.boolean().optional(),
    botChallenge: BotChallengePolicySchema.optional(),
    botChallengeCost: BotChallengeCostSchema.optional(),
  })
  .strict();

export type Organization = z.infer<typeof OrganizationSchema>;
export type OrganizationCreate = z.infer<typeof OrganizationCreateSchema>;
export type OrganizationUpdate = z.infer<typeof OrganizationUpdateSchema>;
