import { clientsIdSecretsIdOperations } from "~/.server/admin/operations/clients";
import { adminAction, adminLoader } from "~/.server/admin/http/route";

export const loader = adminLoader(clientsIdSecretsIdOperations);
export const action = adminAction(clientsIdSecretsIdOperations);
