import { applicationsIdDeactivateOperations } from "~/.server/admin/operations/applications";
import { adminAction, adminLoader } from "~/.server/admin/http/route";

export const loader = adminLoader(applicationsIdDeactivateOperations);
export const action = adminAction(applicationsIdDeactivateOperations);
