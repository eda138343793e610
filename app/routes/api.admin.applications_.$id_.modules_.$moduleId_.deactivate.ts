import { applicationsIdModulesIdDeactivateOperations } from "~/.server/admin/operations/applications";
import { adminAction, adminLoader } from "~/.server/admin/http/route";

export const loader = adminLoader(applicationsIdModulesIdDeactivateOperations);
export const action = adminAction(applicationsIdModulesIdDeactivateOperations);
