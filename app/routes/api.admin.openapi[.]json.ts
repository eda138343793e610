import { openapiJsonOperations } from "~/.server/admin/operations/metadata";
import { adminAction, adminLoader } from "~/.server/admin/http/route";

export const loader = adminLoader(openapiJsonOperations);
export const action = adminAction(openapiJsonOperations);
