import { clientsOperations } from "~/.server/admin/operations/clients";
import { adminAction, adminLoader } from "~/.server/admin/http/route";

export const loader = adminLoader(clientsOperations);
export const action = adminAction(clientsOperations);
