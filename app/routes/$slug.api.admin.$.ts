import { serveOrganizationAdminApi } from "~/.server/admin/http/serve";

/** An organization's own administration: the Admin API's operations that its administrators may run, for its targets only (decision 090). */
export const loader = serveOrganizationAdminApi;
export const action = serveOrganizationAdminApi;
