import { organizationsValidateSlugOperations } from "~/.server/admin/operations/organizations";
import { adminAction, adminLoader } from "~/.server/admin/http/route";

export const loader = adminLoader(organizationsValidateSlugOperations);
export const action = adminAction(organizationsValidateSlugOperations);
