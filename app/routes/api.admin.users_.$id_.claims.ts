import { usersIdClaimsOperations } from "~/.server/admin/operations/claims";
import { adminAction, adminLoader } from "~/.server/admin/http/route";

export const loader = adminLoader(usersIdClaimsOperations);
export const action = adminAction(usersIdClaimsOperations);
