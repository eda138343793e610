import { keysOperations } from "~/.server/admin/operations/keys";
import { adminAction, adminLoader } from "~/.server/admin/http/route";

export const loader = adminLoader(keysOperations);
export const action = adminAction(keysOperations);
