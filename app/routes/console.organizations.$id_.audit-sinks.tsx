import { type ActionFunctionArgs, type LoaderFunctionArgs, type MetaFunction } from "@remix-run/node";
import { Link, useActionData, useLoaderData } from "@remix-run/react";
import { auditSinksPageAction, auditSinksPageData } from "~/.server/console/audit-sinks-page";
import { consoleHeaders, requireConsole, requireConsoleForm } from "~/.server/console/page";
import { AuditSinksView } from "~/components/console/audit-sinks-view";

export const headers = consoleHeaders;
export const meta: MetaFunction = () => [{ title: "Audit streaming · Porta console" }];

/** An organization's audit sinks (decision 092), in the service console. */
export async function loader(args: LoaderFunctionArgs) {
  return auditSinksPageData(await requireConsole(args), args.params.id!, args.request);
}

export async function action(args: ActionFunctionArgs) {
  const { console, form } = await requireConsoleForm(args);
  const orgId = args.params.id!;
  return auditSinksPageAction(console, orgId, form, `/console/organizations/${orgId}/audit-sinks`);
}

export default function AuditSinks() {
  const { org, sinks, deadLetters, error, done } = useLoaderData<typeof loader>();
  const result = useActionData<typeof action>();
  return (
    <AuditSinksView
      sinks={sinks}
      deadLetters={deadLetters}
      error={error}
      done={done}
      result={result}
      breadcrumb={<p className="breadcrumb"><Link to={`/console/organizations/${org.id}`}>{org.name}</Link></p>}
    />
  );
}
