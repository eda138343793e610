import { applicationsOperations } from "~/.server/admin/operations/applications";
import { adminAction, adminLoader } from "~/.server/admin/http/route";

export const loader = adminLoader(applicationsOperations);
export const action = adminAction(applicationsOperations);
