import { orgUserExportOperations } from "~/.server/admin/operations/users";
import { adminAction, adminLoader } from "~/.server/admin/http/route";

export const loader = adminLoader(orgUserExportOperations);
export const action = adminAction(orgUserExportOperations);
