import { orgUserVerifyEmailOperations } from "~/.server/admin/operations/users";
import { adminAction, adminLoader } from "~/.server/admin/http/route";

export const loader = adminLoader(orgUserVerifyEmailOperations);
export const action = adminAction(orgUserVerifyEmailOperations);
