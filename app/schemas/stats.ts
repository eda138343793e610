import { z } from "zod";

/** The system-wide statistics overview of the Admin API. */
const LoginWindowSchema = z.object({
  total: z.number().int(),
  /** Successful logins per primary method (`password`, `magic_link`, `passkey`). */
  byMethod: z.record(z.string(), z.number().int()),
});

/** Successful logins of one UTC calendar day (`YYYY-MM-DD`), by primary method. */
const LoginDaySchema = LoginWindowSchema.extend({ date: z.iso.date() });

export type LoginWindow = z.infer<typeof LoginWindowSchema>;
export type LoginDay = z.infer<typeof LoginDaySchema>;

/**
 * The dashboard's checklist to a first app, outside the super-admin organization:
 * `organizationId` is the newest organization (null without one).
 */
export const FirstStepsSchema = z.object({
  organizationId: z.uuid().nullable(),
  application: z.boolean(),
  client: z.boolean(),
  user: z.boolean(),
  signIn: z.boolean(),
});
export type FirstSteps = z.infer<typeof FirstStepsSchema>;

export const StatsOverviewSchema = z.object({
  generatedAt: z.iso.datetime(),
  organizations: z.object({
    /** Active and suspended organizations: deleted ones are not counted (byStatus.deleted says how many there are). */
    total: z.number().int(),
    byStatus: z.object({ active: z.number().int(), suspended: z.number().int(), deleted: z.number().int() }),
  }),
  /** Users of organizations that are not deleted; `importedPassword`: still on a password hash imported from another system (decision 085). */
  users: z.object({ total: z.number().int(), active: z.number().int(), inactive: z.number().int(), locked: z.number().int(), importedPassword: z.number().int() }),
  /** `daily`: the last 14 UTC days, oldest first, today (so far) last. */
  logins: z.object({ last24h: LoginWindowSchema, last7d: LoginWindowSchema, daily: z.array(LoginDaySchema) }),
  twoFactor: z.object({
    totpEnrolled: z.number().int(),
    emailOtpEnabled: z.number().int(),
    /** Users with at least one second factor. */
    anyEnrolled: z.number().int(),
    /** anyEnrolled / users.total, 0 without users. */
    adoptionRate: z.number(),
  }),
  firstSteps: FirstStepsSchema,
});

export type StatsOverview = z.infer<typeof StatsOverviewSchema>;

const CountByStatusSchema = z.object({ total: z.number().int(), active: z.number().int(), inactive: z.number().int() });

/** The statistics of one organization (GET /stats/organizations/{orgId}). */
export const OrganizationStatsSchema = z.object({
  generatedAt: z.iso.datetime(),
  organization: z.object({ id: z.uuid(), slug: z.string(), status: z.string() }),
  users: z.object({ total: z.number().int(), active: z.number().int(), inactive: z.number().int(), locked: z.number().int(), importedPassword: z.number().int() }),
  /** `daily`: the last 30 UTC days, oldest first, today (so far) last. */
  logins: z.object({ last24h: LoginWindowSchema, last7d: LoginWindowSchema, last30d: LoginWindowSchema, daily: z.array(LoginDaySchema) }),
  twoFactor: StatsOverviewSchema.shape.twoFactor,
  clients: CountByStatusSchema,
  applications: CountByStatusSchema,
});

export type OrganizationStats = z.infer<typeof OrganizationStatsSchema>;
