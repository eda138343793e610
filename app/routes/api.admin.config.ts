import { configOperations } from "~/.server/admin/operations/config";
import { adminAction, adminLoader } from "~/.server/admin/http/route";

export const loader = adminLoader(configOperations);
export const action = adminAction(configOperations);
