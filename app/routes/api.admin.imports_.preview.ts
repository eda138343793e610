import { importPreviewOperations } from "~/.server/admin/operations/transfer";
import { adminAction, adminLoader } from "~/.server/admin/http/route";

export const loader = adminLoader(importPreviewOperations);
export const action = adminAction(importPreviewOperations);
