import { orgUserPasswordOperations } from "~/.server/admin/operations/users";
import { adminAction, adminLoader } from "~/.server/admin/http/route";

export const loader = adminLoader(orgUserPasswordOperations);
export const action = adminAction(orgUserPasswordOperations);
