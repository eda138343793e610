import type { LoaderFunctionArgs } from "@remix-run/node";
import { requireConsole } from "~/.server/console/page";

/** Live slug validation for the create form: the Admin API's validateSlug operation, as JSON. */
export async function loader(args: LoaderFunctionArgs) {
  const console = await requireConsole(args);
  const slug = new URL(args.request.url).searchParams.get("slug") ?? "";
  const result = await console.admin("organizations.validateSlug", { query: { slug } });
  return Response.json(result.ok ? result.body : { slug, valid: false, available: false, message: result.error.message }, { headers: { "Cache-Control": "no-store" } });
}
