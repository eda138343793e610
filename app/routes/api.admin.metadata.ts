import { metadataOperations } from "~/.server/admin/operations/metadata";
import { adminAction, adminLoader } from "~/.server/admin/http/route";

export const loader = adminLoader(metadataOperations);
export const action = adminAction(metadataOperations);
