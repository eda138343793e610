import { brandingAssetOperations } from "~/.server/admin/operations/branding";
import { adminAction, adminLoader } from "~/.server/admin/http/route";

export const loader = adminLoader(brandingAssetOperations);
export const action = adminAction(brandingAssetOperations);
