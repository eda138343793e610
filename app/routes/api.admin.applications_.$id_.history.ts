import { applicationsIdHistoryOperations } from "~/.server/admin/operations/applications";
import { adminAction, adminLoader } from "~/.server/admin/http/route";

export const loader = adminLoader(applicationsIdHistoryOperations);
export const action = adminAction(applicationsIdHistoryOperations);
