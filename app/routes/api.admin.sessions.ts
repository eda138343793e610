import { sessionsOperations } from "~/.server/admin/operations/sessions";
import { adminAction, adminLoader } from "~/.server/admin/http/route";

export const loader = adminLoader(sessionsOperations);
export const action = adminAction(sessionsOperations);
