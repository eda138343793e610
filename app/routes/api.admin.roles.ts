import { rolesOperations } from "~/.server/admin/operations/rbac";
import { adminAction, adminLoader } from "~/.server/admin/http/route";

export const loader = adminLoader(rolesOperations);
export const action = adminAction(rolesOperations);
