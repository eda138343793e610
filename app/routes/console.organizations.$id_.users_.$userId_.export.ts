import { data, type LoaderFunctionArgs } from "@remix-run/node";
import { requireConsole } from "~/.server/console/page";

/** The user's data export (the Admin API's exportData) as a JSON download. */
export async function loader(args: LoaderFunctionArgs) {
  const console = await requireConsole(args);
  const params = { orgId: args.params.id!, userId: args.params.userId! };
  const result = await console.admin("users.exportData", { params });
  if (!result.ok) throw data({ message: result.error.code }, { status: result.status });
  return new Response(JSON.stringify(result.body, null, 2), {
    headers: {
      "Content-Type": "application/json; charset=utf-8",
      "Content-Disposition": `attachment; filename="user-${params.userId}.json"`,
      "Cache-Control": "no-store",
    },
  });
}
