import { data, redirect } from "@remix-run/node";
import type { DomainsPageOutcome } from "~/schemas/domain";
import type { OperationId, OperationOutput } from "../admin/http/operation-table";
import type { AdminInput, AdminResult } from "./gateway";
import { NO_STORE } from "./page";

/**
 * An organization's email domains page (decision 086), for both consoles that show it: the service
 * console's (any organization) and the organization's own (decision 090). Each route names the
 * organization and where the page lives; what the page reads and does is here once. Every step is
 * an Admin API operation run as the page's caller, so the tenant checks are the Admin API's.
 */
export interface PageCaller {
  admin<Id extends OperationId>(operationId: Id, input?: AdminInput<Id>): Promise<AdminResult<OperationOutput<Id>>>;
}

export async function domainsPageData(console: PageCaller, orgId: string, request: Request) {
  const [org, domains, providers] = await Promise.all([
    console.admin("organizations.get", { params: { id: orgId } }),
    console.admin("domains.list", { params: { orgId } }),
    console.admin("identityProviders.list", { query: { organizationId: orgId, limit: "100" } }),
  ]);
  if (!org.ok || !domains.ok) throw data({ message: "not_found" }, { status: 404 });
  const verified = new Set(domains.body.data.filter((d) => d.status === "verified").map((d) => d.domain));
  // Claims of the organization's connections that no verified domain backs: discovery still follows them, linking by assumed email does not.
  const unverifiedClaims = (providers.ok ? providers.body.data : []).flatMap((p) => p.domains.filter((d) => !verified.has(d)).map((domain) => ({ domain, provider: p.name, providerId: p.id })));
  return data(
    { org: { id: org.body.id, name: org.body.name }, domains: domains.body.data, unverifiedClaims, done: new URL(request.url).searchParams.get("done") },
    { headers: NO_STORE },
  );
}

/** Adds, verifies or removes a domain of `orgId`; `pagePath` is where the page redirects after a change. */
export async function domainsPageAction(console: PageCaller, orgId: string, form: FormData, pagePath: string) {
  const intent = String(form.get("intent") ?? "");
  const domainId = String(form.get("domainId") ?? "");
  if (intent === "remove" || intent === "verify") {
    // The page acts on this organization's domains only: another organization's id is not found here.
    const found = await console.admin("domains.get", { params: { id: domainId } });
    if (!found.ok || found.body.organizationId !== orgId) throw data({ message: "not_found" }, { status: 404 });
  }
  if (intent === "remove") {
    const removed = await console.admin("domains.delete", { params: { id: domainId } });
    if (!removed.ok) return data<DomainsPageOutcome>({ kind: "invalid", errors: { form: removed.error.message } }, { status: removed.status, headers: NO_STORE });
    return redirect(`${pagePath}?done=removed`);
  }
  if (intent === "verify") {
    const checked = await console.admin("domains.verify", { params: { id: domainId } });
    if (!checked.ok) return data<DomainsPageOutcome>({ kind: "invalid", errors: { form: checked.error.message } }, { status: checked.status, headers: NO_STORE });
    return data<DomainsPageOutcome>({ kind: "checked", id: checked.body.id, status: checked.body.status, lastError: checked.body.lastError }, { headers: NO_STORE });
  }
  // The Admin API checks the domain with the schema of its body: a refusal names the field.
  const typed = String(form.get("domain") ?? "");
  const added = await console.admin("domains.add", { params: { orgId }, body: { domain: typed } });
  if (!added.ok) {
    const errors = added.error.details?.length ? Object.fromEntries(added.error.details.map((d) => [d.field, d.message])) : { form: added.error.message };
    return data<DomainsPageOutcome>({ kind: "invalid", errors, domain: typed }, { status: added.status, headers: NO_STORE });
  }
  return redirect(`${pagePath}?done=added`);
}
