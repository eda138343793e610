import { applicationsIdModulesOperations } from "~/.server/admin/operations/applications";
import { adminAction, adminLoader } from "~/.server/admin/http/route";

export const loader = adminLoader(applicationsIdModulesOperations);
export const action = adminAction(applicationsIdModulesOperations);
