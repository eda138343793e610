import { userByIdDeactivateOperations } from "~/.server/admin/operations/users";
import { adminAction, adminLoader } from "~/.server/admin/http/route";

export const loader = adminLoader(userByIdDeactivateOperations);
export const action = adminAction(userByIdDeactivateOperations);
