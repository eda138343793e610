import { exportOperations } from "~/.server/admin/operations/transfer";
import { adminAction, adminLoader } from "~/.server/admin/http/route";

export const loader = adminLoader(exportOperations);
export const action = adminAction(exportOperations);
