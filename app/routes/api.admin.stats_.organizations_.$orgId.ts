import { organizationStatsOperations } from "~/.server/admin/operations/stats";
import { adminAction, adminLoader } from "~/.server/admin/http/route";

export const loader = adminLoader(organizationStatsOperations);
export const action = adminAction(organizationStatsOperations);
