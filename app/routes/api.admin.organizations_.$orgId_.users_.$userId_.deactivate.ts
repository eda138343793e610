import { orgUserDeactivateOperations } from "~/.server/admin/operations/users";
import { adminAction, adminLoader } from "~/.server/admin/http/route";

export const loader = adminLoader(orgUserDeactivateOperations);
export const action = adminAction(orgUserDeactivateOperations);
