import { importApplyOperations } from "~/.server/admin/operations/transfer";
import { adminAction, adminLoader } from "~/.server/admin/http/route";

export const loader = adminLoader(importApplyOperations);
export const action = adminAction(importApplyOperations);
