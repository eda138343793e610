import { userTwoFactorOperations } from "~/.server/admin/operations/two-factor";
import { adminAction, adminLoader } from "~/.server/admin/http/route";

export const loader = adminLoader(userTwoFactorOperations);
export const action = adminAction(userTwoFactorOperations);
