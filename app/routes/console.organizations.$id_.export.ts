import { data, type LoaderFunctionArgs } from "@remix-run/node";
import { requireConsole } from "~/.server/console/page";

/** The organization's export package (the Admin API's exports.download) as a file download. */
export async function loader(args: LoaderFunctionArgs) {
  const console = await requireConsole(args);
  const result = await console.admin("exports.download", { params: { orgId: args.params.id! } });
  if (!result.ok) throw data({ message: result.error.code }, { status: result.status });
  const day = new Date().toISOString().slice(0, 10);
  return new Response(JSON.stringify(result.body), {
    headers: {
      "Content-Type": "application/json; charset=utf-8",
      "Content-Disposition": `attachment; filename="porta-${result.body.content.organization.slug}-${day}.json"`,
      "Cache-Control": "no-store",
    },
  });
}
