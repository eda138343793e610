import { data, redirect, type ActionFunctionArgs, type LoaderFunctionArgs, type MetaFunction } from "@remix-run/node";
import { useActionData, useLoaderData } from "@remix-run/react";
import { consoleHeaders, NO_STORE } from "~/.server/console/page";
import { requireOrganizationConsole, requireOrganizationConsoleForm } from "~/.server/console/organization-console";
import { scimEndpointOf } from "~/.server/scim/paths";
import { text, zodFieldErrors } from "~/components/console/forms";
import { ScimView, type ScimPageOutcome } from "~/components/console/scim-view";
import { DEFAULT_SCIM_TOKEN_DAYS, ScimTokenCreateSchema } from "~/schemas/scim-token";

/** The organization console's page (decision 090): the service console's, bound to the signed-in administrator's organization through its door. */
export const headers = consoleHeaders;
export const meta: MetaFunction = () => [{ title: "SCIM provisioning · Porta" }];

/** An organization's SCIM endpoint (decision 084): its base URL and the tokens identity providers provision with. */
export async function loader(args: LoaderFunctionArgs) {
  const console = await requireOrganizationConsole(args);
  const orgId = console.organizationId;
  const [org, tokens] = await Promise.all([
    console.admin("organizations.get", { params: { id: orgId } }),
    console.admin("scimTokens.list", { params: { orgId }, query: { limit: "100" } }),
  ]);
  if (!org.ok) throw data({ message: "not_found" }, { status: 404 });
  return data(
    { org: org.body, endpoint: scimEndpointOf(args.context.services.config.baseUrl, org.body.slug), tokens: tokens.ok ? tokens.body.data : [], done: new URL(args.request.url).searchParams.get("done") },
    { headers: NO_STORE },
  );
}

const t404 = "The SCIM token does not exist.";

type ActionResult = ScimPageOutcome;

export async function action(args: ActionFunctionArgs) {
  const { console, form } = await requireOrganizationConsoleForm(args);
  const orgId = console.organizationId;
  if (String(form.get("intent") ?? "") === "revoke") {
    const id = String(form.get("tokenId") ?? "");
    // Only a token of the organization this page is about: its id is checked before anything is revoked.
    const found = await console.admin("scimTokens.get", { params: { id } });
    if (!found.ok || found.body.organizationId !== orgId) {
      return data<ActionResult>({ kind: "invalid", errors: { form: found.ok ? t404 : found.error.message } }, { status: found.ok ? 404 : found.status, headers: NO_STORE });
    }
    const revoked = await console.admin("scimTokens.revoke", { params: { id } });
    if (!revoked.ok) return data<ActionResult>({ kind: "invalid", errors: { form: revoked.error.message } }, { status: revoked.status, headers: NO_STORE });
    return redirect(`/${console.slug}/console/scim?done=revoked`);
  }
  const days = Number(text(form, "expiresInDays") ?? String(DEFAULT_SCIM_TOKEN_DAYS));
  const parsed = ScimTokenCreateSchema.safeParse({ name: text(form, "name") ?? "", expiresInDays: days });
  if (!parsed.success) return data<ActionResult>({ kind: "invalid", errors: zodFieldErrors(parsed.error) }, { status: 422, headers: NO_STORE });
  const issued = await console.admin("scimTokens.create", { params: { orgId }, body: parsed.data });
  if (!issued.ok) return data<ActionResult>({ kind: "invalid", errors: { form: issued.error.message } }, { status: issued.status, headers: NO_STORE });
  // The value is in this one response only; the page that shows it is never cached.
  return data<ActionResult>({ kind: "issued", token: issued.body.token }, { headers: NO_STORE });
}

export default function Scim() {
  const { endpoint, tokens, done } = useLoaderData<typeof loader>();
  const result = useActionData<typeof action>();
  return <ScimView endpoint={endpoint} tokens={tokens} done={done} result={result} />;
}
