import { bulkOperations } from "~/.server/admin/operations/bulk";
import { adminAction, adminLoader } from "~/.server/admin/http/route";

export const loader = adminLoader(bulkOperations);
export const action = adminAction(bulkOperations);
