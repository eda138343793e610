import { clientsIdDeactivateOperations } from "~/.server/admin/operations/clients";
import { adminAction, adminLoader } from "~/.server/admin/http/route";

export const loader = adminLoader(clientsIdDeactivateOperations);
export const action = adminAction(clientsIdDeactivateOperations);
