import { userRoleOperations } from "~/.server/admin/operations/rbac";
import { adminAction, adminLoader } from "~/.server/admin/http/route";

export const loader = adminLoader(userRoleOperations);
export const action = adminAction(userRoleOperations);
