import { applicationsIdClaimsIdOperations } from "~/.server/admin/operations/claims";
import { adminAction, adminLoader } from "~/.server/admin/http/route";

export const loader = adminLoader(applicationsIdClaimsIdOperations);
export const action = adminAction(applicationsIdClaimsIdOperations);
