import { organizationTwoFactorPolicyOperations } from "~/.server/admin/operations/two-factor";
import { adminAction, adminLoader } from "~/.server/admin/http/route";

export const loader = adminLoader(organizationTwoFactorPolicyOperations);
export const action = adminAction(organizationTwoFactorPolicyOperations);
