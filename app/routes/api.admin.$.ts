import { serveAdminApi } from "~/.server/admin/http/serve";

/** The whole Admin API: the operation table names every path (app/.server/admin/http/router.ts). */
export const loader = serveAdminApi;
export const action = serveAdminApi;
