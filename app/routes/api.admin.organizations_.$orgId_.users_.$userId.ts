import { orgUserOperations } from "~/.server/admin/operations/users";
import { adminAction, adminLoader } from "~/.server/admin/http/route";

export const loader = adminLoader(orgUserOperations);
export const action = adminAction(orgUserOperations);
