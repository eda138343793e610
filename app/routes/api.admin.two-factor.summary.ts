import { twoFactorSummaryOperations } from "~/.server/admin/operations/two-factor";
import { adminAction, adminLoader } from "~/.server/admin/http/route";

export const loader = adminLoader(twoFactorSummaryOperations);
export const action = adminAction(twoFactorSummaryOperations);
