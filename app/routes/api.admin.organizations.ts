import { organizationsOperations } from "~/.server/admin/operations/organizations";
import { adminAction, adminLoader } from "~/.server/admin/http/route";

export const loader = adminLoader(organizationsOperations);
export const action = adminAction(organizationsOperations);
