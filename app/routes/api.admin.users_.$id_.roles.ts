import { userRolesOperations } from "~/.server/admin/operations/rbac";
import { adminAction, adminLoader } from "~/.server/admin/http/route";

export const loader = adminLoader(userRolesOperations);
export const action = adminAction(userRolesOperations);
