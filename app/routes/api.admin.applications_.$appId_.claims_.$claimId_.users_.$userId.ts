import { applicationsIdClaimsIdUsersIdOperations } from "~/.server/admin/operations/claims";
import { adminAction, adminLoader } from "~/.server/admin/http/route";

export const loader = adminLoader(applicationsIdClaimsIdUsersIdOperations);
export const action = adminAction(applicationsIdClaimsIdUsersIdOperations);
