import { organizationsIdSuspendOperations } from "~/.server/admin/operations/organizations";
import { adminAction, adminLoader } from "~/.server/admin/http/route";

export const loader = adminLoader(organizationsIdSuspendOperations);
export const action = adminAction(organizationsIdSuspendOperations);
