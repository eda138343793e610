import { sessionByIdOperations } from "~/.server/admin/operations/sessions";
import { adminAction, adminLoader } from "~/.server/admin/http/route";

export const loader = adminLoader(sessionByIdOperations);
export const action = adminAction(sessionByIdOperations);
