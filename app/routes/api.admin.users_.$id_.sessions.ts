import { userSessionsOperations } from "~/.server/admin/operations/sessions";
import { adminAction, adminLoader } from "~/.server/admin/http/route";

export const loader = adminLoader(userSessionsOperations);
export const action = adminAction(userSessionsOperations);
