import { z } from "zod";
import { StatsOverviewSchema } from "~/schemas/stats";
import { operation } from "../http/route";
import { statsOverview } from "../stats/service";

/** api.admin.stats_.overview */
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
    handler: async ({ services }) => ({ body: await statsOverview(services) }),
  }),
];
