import { userByIdVerifyEmailOperations } from "~/.server/admin/operations/users";
import { adminAction, adminLoader } from "~/.server/admin/http/route";

export const loader = adminLoader(userByIdVerifyEmailOperations);
export const action = adminAction(userByIdVerifyEmailOperations);
