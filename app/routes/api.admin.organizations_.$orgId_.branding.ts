import { brandingOperations } from "~/.server/admin/operations/branding";
import { adminAction, adminLoader } from "~/.server/admin/http/route";

export const loader = adminLoader(brandingOperations);
export const action = adminAction(brandingOperations);
