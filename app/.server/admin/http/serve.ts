import type { ActionFunctionArgs, LoaderFunctionArgs } from "@remix-run/node";
import { AppError } from "../../errors";
import { adminOperations } from "./operation-table";
import { errorResponse, runOperation } from "./route";
import { createRouter } from "./router";

let router: ReturnType<typeof createRouter> | undefined;

/** Segments below /api/admin, percent-decoded (the edge guard refused malformed encodings). */
function segmentsOf(request: Request): string[] {
  const path = new URL(request.url).pathname.replace(/^\/api\/admin\/?/, "");
  return path === "" ? [] : path.split("/").map((segment) => decodeURIComponent(segment));
}

/** The loader and action of app/routes/api.admin.$.ts: every Admin API request comes here. */
export function serveAdminApi(args: LoaderFunctionArgs | ActionFunctionArgs): Promise<Response> {
  router ??= createRouter(adminOperations());
  const { request, context } = args;
  const match = router.match(request.method, segmentsOf(request));
  if (match.kind === "found") return runOperation(match.op, { request, context, params: match.params });
  if (match.kind === "method_not_allowed") {
    const error = new AppError(405, "method_not_allowed", `${request.method.toUpperCase()} is not supported here; use ${match.allow.join(", ")}.`, undefined, { Allow: match.allow.join(", ") });
    return Promise.resolve(errorResponse(error));
  }
  return Promise.resolve(errorResponse(new AppError(404, "not_found", "There is no Admin API operation at this path.")));
}
