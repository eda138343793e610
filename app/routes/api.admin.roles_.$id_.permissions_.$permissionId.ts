import { rolePermissionOperations } from "~/.server/admin/operations/rbac";
import { adminAction, adminLoader } from "~/.server/admin/http/route";

export const loader = adminLoader(rolePermissionOperations);
export const action = adminAction(rolePermissionOperations);
