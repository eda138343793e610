import { clientsIdActivateOperations } from "~/.server/admin/operations/clients";
import { adminAction, adminLoader } from "~/.server/admin/http/route";

export const loader = adminLoader(clientsIdActivateOperations);
export const action = adminAction(clientsIdActivateOperations);
