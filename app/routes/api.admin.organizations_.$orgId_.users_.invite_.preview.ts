import { orgUsersInvitePreviewOperations } from "~/.server/admin/operations/users";
import { adminAction, adminLoader } from "~/.server/admin/http/route";

export const loader = adminLoader(orgUsersInvitePreviewOperations);
export const action = adminAction(orgUsersInvitePreviewOperations);
