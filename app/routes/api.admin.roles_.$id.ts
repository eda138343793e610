import { roleOperations } from "~/.server/admin/operations/rbac";
import { adminAction, adminLoader } from "~/.server/admin/http/route";

export const loader = adminLoader(roleOperations);
export const action = adminAction(roleOperations);
