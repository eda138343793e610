import { orgUserActivateOperations } from "~/.server/admin/operations/users";
import { adminAction, adminLoader } from "~/.server/admin/http/route";

export const loader = adminLoader(orgUserActivateOperations);
export const action = adminAction(orgUserActivateOperations);
