import { orgUserHistoryOperations } from "~/.server/admin/operations/users";
import { adminAction, adminLoader } from "~/.server/admin/http/route";

export const loader = adminLoader(orgUserHistoryOperations);
export const action = adminAction(orgUserHistoryOperations);
