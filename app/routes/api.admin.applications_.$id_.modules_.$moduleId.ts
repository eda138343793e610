import { applicationsIdModulesIdOperations } from "~/.server/admin/operations/applications";
import { adminAction, adminLoader } from "~/.server/admin/http/route";

export const loader = adminLoader(applicationsIdModulesIdOperations);
export const action = adminAction(applicationsIdModulesIdOperations);
