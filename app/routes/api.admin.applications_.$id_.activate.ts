import { applicationsIdActivateOperations } from "~/.server/admin/operations/applications";
import { adminAction, adminLoader } from "~/.server/admin/http/route";

export const loader = adminLoader(applicationsIdActivateOperations);
export const action = adminAction(applicationsIdActivateOperations);
