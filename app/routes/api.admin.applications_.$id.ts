import { applicationsIdOperations } from "~/.server/admin/operations/applications";
import { adminAction, adminLoader } from "~/.server/admin/http/route";

export const loader = adminLoader(applicationsIdOperations);
export const action = adminAction(applicationsIdOperations);
