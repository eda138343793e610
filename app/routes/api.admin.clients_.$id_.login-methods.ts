import { clientsIdLoginMethodsOperations } from "~/.server/admin/operations/clients";
import { adminAction, adminLoader } from "~/.server/admin/http/route";

export const loader = adminLoader(clientsIdLoginMethodsOperations);
export const action = adminAction(clientsIdLoginMethodsOperations);
