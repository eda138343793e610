import { UuidSchema } from "~/schemas/uuid";
import { z } from "zod";
import { OrganizationStatsSchema, StatsOverviewSchema } from "~/schemas/stats";
import { operation } from "../http/route";
import { organizationStats } from "../stats/organization";
import { statsOverview } from "../stats/service";

/** /stats/overview */
export const statsOverviewOperations = [
  operation({
    method: "GET",
    path: "/stats/overview",
    operationId: "stats.get",
    summary: "System-wide statistics: organizations by status, users, logins in the last 24 hours and 7 days by method, 2FA adoption",
    tag: "stats",
    permission: "admin:stats:read",
    query: z.object({}).strict(),
    response: StatsOverviewSchema,
    handler: async ({ ctx }) => ({ body: await statsOverview(ctx) }),
  }),
];

/** /stats/organizations/{orgId} */
export const organizationStatsOperations = [
  operation({
    method: "GET",
    path: "/stats/organizations/{orgId}",
    operationId: "stats.getOrganizationStats",
    summary: "Statistics of one organization: users, logins in the last 24 hours, 7 and 30 days by method, 2FA adoption, clients and applications",
    tag: "stats",
    permission: "admin:stats:read",
    params: z.object({ orgId: UuidSchema }),
    query: z.object({}).strict(),
    response: OrganizationStatsSchema,
    handler: async ({ ctx, params }) => ({ body: await organizationStats(ctx, params.orgId) }),
  }),
];
