import { userEffectivePermissionsOperations } from "~/.server/admin/operations/rbac";
import { adminAction, adminLoader } from "~/.server/admin/http/route";

export const loader = adminLoader(userEffectivePermissionsOperations);
export const action = adminAction(userEffectivePermissionsOperations);
