import { userByIdHistoryOperations } from "~/.server/admin/operations/users";
import { adminAction, adminLoader } from "~/.server/admin/http/route";

export const loader = adminLoader(userByIdHistoryOperations);
export const action = adminAction(userByIdHistoryOperations);
