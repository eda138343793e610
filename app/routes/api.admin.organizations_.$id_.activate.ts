import { organizationsIdActivateOperations } from "~/.server/admin/operations/organizations";
import { adminAction, adminLoader } from "~/.server/admin/http/route";

export const loader = adminLoader(organizationsIdActivateOperations);
export const action = adminAction(organizationsIdActivateOperations);
