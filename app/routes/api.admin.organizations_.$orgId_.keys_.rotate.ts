import { organizationKeysRotateOperations } from "~/.server/admin/operations/keys";
import { adminAction, adminLoader } from "~/.server/admin/http/route";

export const loader = adminLoader(organizationKeysRotateOperations);
export const action = adminAction(organizationKeysRotateOperations);
