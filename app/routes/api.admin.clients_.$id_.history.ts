import { clientsIdHistoryOperations } from "~/.server/admin/operations/clients";
import { adminAction, adminLoader } from "~/.server/admin/http/route";

export const loader = adminLoader(clientsIdHistoryOperations);
export const action = adminAction(clientsIdHistoryOperations);
