import { keysRotateOperations } from "~/.server/admin/operations/keys";
import { adminAction, adminLoader } from "~/.server/admin/http/route";

export const loader = adminLoader(keysRotateOperations);
export const action = adminAction(keysRotateOperations);
