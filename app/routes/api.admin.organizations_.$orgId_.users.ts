import { orgUsersOperations } from "~/.server/admin/operations/users";
import { adminAction, adminLoader } from "~/.server/admin/http/route";

export const loader = adminLoader(orgUsersOperations);
export const action = adminAction(orgUsersOperations);
