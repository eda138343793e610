import { organizationsIdOperations } from "~/.server/admin/operations/organizations";
import { adminAction, adminLoader } from "~/.server/admin/http/route";

export const loader = adminLoader(organizationsIdOperations);
export const action = adminAction(organizationsIdOperations);
