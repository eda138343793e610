import { organizationKeysOperations } from "~/.server/admin/operations/keys";
import { adminAction, adminLoader } from "~/.server/admin/http/route";

export const loader = adminLoader(organizationKeysOperations);
export const action = adminAction(organizationKeysOperations);
