import { exportManifestOperations } from "~/.server/admin/operations/transfer";
import { adminAction, adminLoader } from "~/.server/admin/http/route";

export const loader = adminLoader(exportManifestOperations);
export const action = adminAction(exportManifestOperations);
