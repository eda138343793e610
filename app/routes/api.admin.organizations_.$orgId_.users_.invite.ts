import { orgUsersInviteOperations } from "~/.server/admin/operations/users";
import { adminAction, adminLoader } from "~/.server/admin/http/route";

export const loader = adminLoader(orgUsersInviteOperations);
export const action = adminAction(orgUsersInviteOperations);
