import { configKeyOperations } from "~/.server/admin/operations/config";
import { adminAction, adminLoader } from "~/.server/admin/http/route";

export const loader = adminLoader(configKeyOperations);
export const action = adminAction(configKeyOperations);
