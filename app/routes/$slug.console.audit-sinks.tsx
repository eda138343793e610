import { type ActionFunctionArgs, type LoaderFunctionArgs, type MetaFunction } from "@remix-run/node";
import { useActionData, useLoaderData } from "@remix-run/react";
import { auditSinksPageAction, auditSinksPageData } from "~/.server/console/audit-sinks-page";
import { consoleHeaders } from "~/.server/console/page";
import { requireOrganizationConsole, requireOrganizationConsoleForm } from "~/.server/console/organization-console";
import { AuditSinksView } from "~/components/console/audit-sinks-view";

/** The organization console's Audit streaming page (decisions 090, 092): the service console's, bound to the signed-in administrator's organization through its door. */
export const headers = consoleHeaders;
export const meta: MetaFunction = () => [{ title: "Audit streaming · Porta" }];

export async function loader(args: LoaderFunctionArgs) {
  const console = await requireOrganizationConsole(args);
  return auditSinksPageData(console, console.organizationId, args.request);
}

export async function action(args: ActionFunctionArgs) {
  const { console, form } = await requireOrganizationConsoleForm(args);
  return auditSinksPageAction(console, console.organizationId, form, `/${console.slug}/console/audit-sinks`);
}

export default function AuditSinks() {
  const { sinks, deadLetters, error, done } = useLoaderData<typeof loader>();
  const result = useActionData<typeof action>();
  return <AuditSinksView sinks={sinks} deadLetters={deadLetters} error={error} done={done} result={result} />;
}
