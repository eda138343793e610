import { type ActionFunctionArgs, type LoaderFunctionArgs, type MetaFunction } from "@remix-run/node";
import { Link, useActionData, useLoaderData } from "@remix-run/react";
import { domainsPageAction, domainsPageData } from "~/.server/console/domains-page";
import { consoleHeaders, requireConsole, requireConsoleForm } from "~/.server/console/page";
import { DomainsView } from "~/components/console/domains-view";

export const headers = consoleHeaders;
export const meta: MetaFunction = () => [{ title: "Domains · Porta console" }];

/**
 * An organization's email domains (decision 086): each with the DNS TXT record that proves it,
 * Verify now and Remove, and the domains its connections claim without the organization having
 * verified them.
 */
export async function loader(args: LoaderFunctionArgs) {
  return domainsPageData(await requireConsole(args), args.params.id!, args.request);
}

export async function action(args: ActionFunctionArgs) {
  const { console, form } = await requireConsoleForm(args);
  const orgId = args.params.id!;
  return domainsPageAction(console, orgId, form, `/console/organizations/${orgId}/domains`);
}

export default function Domains() {
  const { org, domains, unverifiedClaims, done } = useLoaderData<typeof loader>();
  const result = useActionData<typeof action>();
  return (
    <DomainsView
      domains={domains}
      unverifiedClaims={unverifiedClaims}
      done={done}
      result={result}
      breadcrumb={<p className="breadcrumb"><Link to={`/console/organizations/${org.id}`}>{org.name}</Link></p>}
      providerLink={(c) => <Link to={`/console/organizations/${org.id}/identity-providers/${c.providerId}`}>{c.provider}</Link>}
    />
  );
}
