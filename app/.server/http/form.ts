import { data } from "@remix-run/node";

/**
 * The one way pages read a posted form. A body that is not a form Remix can parse (a broken
 * multipart body, a wrong Content-Type the edge let through) is the sender's mistake: 400, not
 * the 500 an unhandled parse error would give. Text values keep the product's text rule
 * (~/schemas/text) to their schemas, which show a message next to the field.
 */
export async function readForm(request: Request): Promise<FormData> {
  try {
    return await request.formData();
  } catch {
    throw data({ message: "not_a_form" }, { status: 400, headers: { "Cache-Control": "no-store" } });
  }
}
