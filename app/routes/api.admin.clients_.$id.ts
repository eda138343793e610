import { clientsIdOperations } from "~/.server/admin/operations/clients";
import { adminAction, adminLoader } from "~/.server/admin/http/route";

export const loader = adminLoader(clientsIdOperations);
export const action = adminAction(clientsIdOperations);
