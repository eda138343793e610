import { userByIdOperations } from "~/.server/admin/operations/users";
import { adminAction, adminLoader } from "~/.server/admin/http/route";

export const loader = adminLoader(userByIdOperations);
export const action = adminAction(userByIdOperations);
