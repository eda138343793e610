import { clientsIdSecretsOperations } from "~/.server/admin/operations/clients";
import { adminAction, adminLoader } from "~/.server/admin/http/route";

export const loader = adminLoader(clientsIdSecretsOperations);
export const action = adminAction(clientsIdSecretsOperations);
