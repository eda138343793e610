import { userTwoFactorResetOperations } from "~/.server/admin/operations/two-factor";
import { adminAction, adminLoader } from "~/.server/admin/http/route";

export const loader = adminLoader(userTwoFactorResetOperations);
export const action = adminAction(userTwoFactorResetOperations);
