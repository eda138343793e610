import { userRecoveryCodesOperations } from "~/.server/admin/operations/two-factor";
import { adminAction, adminLoader } from "~/.server/admin/http/route";

export const loader = adminLoader(userRecoveryCodesOperations);
export const action = adminAction(userRecoveryCodesOperations);
