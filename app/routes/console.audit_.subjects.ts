import type { LoaderFunctionArgs } from "@remix-run/node";
import { requireConsole } from "~/.server/console/page";

/** Suggestions while typing in an audit filter: the Admin API's audit.searchSubjects, as JSON. */
export async function loader(args: LoaderFunctionArgs) {
  const console = await requireConsole(args);
  const search = new URL(args.request.url).searchParams;
  const result = await console.admin("audit.searchSubjects", {
    query: { role: (search.get("role") ?? "") as "organization", q: search.get("q") ?? "", organizationId: search.get("organizationId") || undefined, limit: "10" },
  });
  return Response.json(result.ok ? result.body : { data: [] }, { status: result.ok ? 200 : result.status, headers: { "Cache-Control": "no-store" } });
}
