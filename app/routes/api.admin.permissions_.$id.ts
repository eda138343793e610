import { permissionOperations } from "~/.server/admin/operations/rbac";
import { adminAction, adminLoader } from "~/.server/admin/http/route";

export const loader = adminLoader(permissionOperations);
export const action = adminAction(permissionOperations);
