import { userByIdActivateOperations } from "~/.server/admin/operations/users";
import { adminAction, adminLoader } from "~/.server/admin/http/route";

export const loader = adminLoader(userByIdActivateOperations);
export const action = adminAction(userByIdActivateOperations);
