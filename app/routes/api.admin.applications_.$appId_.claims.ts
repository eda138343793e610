import { applicationsIdClaimsOperations } from "~/.server/admin/operations/claims";
import { adminAction, adminLoader } from "~/.server/admin/http/route";

export const loader = adminLoader(applicationsIdClaimsOperations);
export const action = adminAction(applicationsIdClaimsOperations);
