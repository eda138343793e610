import type { ActionFunctionArgs, LoaderFunctionArgs } from "@remix-run/node";
import { AppError } from "../../errors";
import { authenticateServiceAdmin, type Authenticate } from "./caller";
import { adminOperations } from "./operation-table";
import { authenticateOrganizationAdmin } from "./require-organization-admin";
import { errorResponse, runOperation } from "./route";
import { createRouter } from "./router";

let router: ReturnType<typeof createRouter> | undefined;

/** Segments below the door's prefix, percent-decoded (the edge guard refused malformed encodings). */
function segmentsOf(request: Request, prefix: string): string[] {
  const pathname = new URL(request.url).pathname;
  const path = pathname.startsWith(prefix) ? pathname.slice(prefix.length).replace(/^\//, "") : "";
  return path === "" ? [] : path.split("/").map((segment) => decodeURIComponent(segment));
}

/** One door onto the operation table: the same paths below `prefix`, the door's own authentication. */
function serveOperations(args: LoaderFunctionArgs | ActionFunctionArgs, prefix: string, authenticate: Authenticate): Promise<Response> {
  router ??= createRouter(adminOperations());
  const { request, context } = args;
  const match = router.match(request.method, segmentsOf(request, prefix));
  if (match.kind === "found") return runOperation(match.op, { request, context, params: match.params }, authenticate);
  if (match.kind === "method_not_allowed") {
    const error = new AppError(405, "method_not_allowed", `${request.method.toUpperCase()} is not supported here; use ${match.allow.join(", ")}.`, undefined, { Allow: match.allow.join(", ") });
    return Promise.resolve(errorResponse(error));
  }
  return Promise.resolve(errorResponse(new AppError(404, "not_found", "There is no Admin API operation at this path.")));
}

/** The loader and action of app/routes/api.admin.$.ts: every Admin API request comes here. */
export function serveAdminApi(args: LoaderFunctionArgs | ActionFunctionArgs): Promise<Response> {
  return serveOperations(args, "/api/admin", authenticateServiceAdmin);
}

/**
 * The loader and action of app/routes/$slug.api.admin.$.ts: an organization's own door onto the
 * same operations (decision 090), for its administrators' tokens; every target must be the
 * organization's (organization-scope.ts).
 */
export function serveOrganizationAdminApi(args: LoaderFunctionArgs | ActionFunctionArgs): Promise<Response> {
  const slug = args.params.slug ?? "";
  return serveOperations(args, `/${slug}/api/admin`, authenticateOrganizationAdmin(slug));
}
