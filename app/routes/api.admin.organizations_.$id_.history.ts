import { organizationsIdHistoryOperations } from "~/.server/admin/operations/organizations";
import { adminAction, adminLoader } from "~/.server/admin/http/route";

export const loader = adminLoader(organizationsIdHistoryOperations);
export const action = adminAction(organizationsIdHistoryOperations);
