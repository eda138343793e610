import { type ActionFunctionArgs, type LoaderFunctionArgs, type MetaFunction } from "@remix-run/node";
import { useActionData, useLoaderData } from "@remix-run/react";
import { domainsPageAction, domainsPageData } from "~/.server/console/domains-page";
import { consoleHeaders } from "~/.server/console/page";
import { requireOrganizationConsole, requireOrganizationConsoleForm } from "~/.server/console/organization-console";
import { DomainsView } from "~/components/console/domains-view";

/** The organization console's domains page (decision 090): the service console's, bound to the signed-in administrator's organization through its door. */
export const headers = consoleHeaders;
export const meta: MetaFunction = () => [{ title: "Domains · Porta" }];

export async function loader(args: LoaderFunctionArgs) {
  const console = await requireOrganizationConsole(args);
  return domainsPageData(console, console.organizationId, args.request);
}

export async function action(args: ActionFunctionArgs) {
  const { console, form } = await requireOrganizationConsoleForm(args);
  return domainsPageAction(console, console.organizationId, form, `/${console.slug}/console/domains`);
}

export default function Domains() {
  const { domains, unverifiedClaims, done } = useLoaderData<typeof loader>();
  const result = useActionData<typeof action>();
  return <DomainsView domains={domains} unverifiedClaims={unverifiedClaims} done={done} result={result} />;
}
