import { permissionsOperations } from "~/.server/admin/operations/rbac";
import { adminAction, adminLoader } from "~/.server/admin/http/route";

export const loader = adminLoader(permissionsOperations);
export const action = adminAction(permissionsOperations);
