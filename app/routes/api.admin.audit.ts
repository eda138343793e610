import { auditOperations } from "~/.server/admin/operations/audit";
import { adminAction, adminLoader } from "~/.server/admin/http/route";

export const loader = adminLoader(auditOperations);
export const action = adminAction(auditOperations);
