import { statsOverviewOperations } from "~/.server/admin/operations/stats";
import { adminAction, adminLoader } from "~/.server/admin/http/route";

export const loader = adminLoader(statsOverviewOperations);
export const action = adminAction(statsOverviewOperations);
