import { data, type LoaderFunctionArgs, type MetaFunction } from "@remix-run/node";
import { AUDIT_EVENT_FAMILIES } from "~/schemas/audit-events";
import { Form, Link, useLoaderData, useLocation } from "@remix-run/react";
import { useTranslation } from "react-i18next";
import { consoleHeaders, NO_STORE, requireConsole } from "~/.server/console/page";
import { z } from "zod";
import { detailErrors, zodFieldErrors } from "~/components/console/forms";
import { auditColumns } from "~/components/console/history";
import { ListTable } from "~/components/console/list-table";
import { CursorPager, Notice, TextField } from "~/components/console/ui";

export const headers = consoleHeaders;
export const meta: MetaFunction = () => [{ title: "Audit log · Porta console" }];

interface AuditEntry {
  id: string;
  createdAt: string;
  eventType: string;
  organizationId: string | null;
  actorType: string;
  actorId: string | null;
  targetType: string | null;
  targetId: string | null;
}

const TEXT_FILTERS = ["eventType", "organizationId", "actorId", "targetType", "targetId"] as const;
const DATE_FILTERS = ["from", "to"] as const;
type Filter = (typeof TEXT_FILTERS)[number] | (typeof DATE_FILTERS)[number];

/** Dates are whole UTC days: "from" starts at its midnight, "to" ends at its last millisecond. */
const DayFilters = z
  .object({ from: z.union([z.literal(""), z.iso.date("must be a date")]), to: z.union([z.literal(""), z.iso.date("must be a date")]) })
  .refine((d) => !d.from || !d.to || d.from <= d.to, { path: ["to"], message: "must not be before the start date" });

export async function loader(args: LoaderFunctionArgs) {
  const console = await requireConsole(args);
  const search = new URL(args.request.url).searchParams;
  const filters = Object.fromEntries([...TEXT_FILTERS, ...DATE_FILTERS].map((f) => [f, search.get(f)?.trim() ?? ""])) as Record<Filter, string>;
  const days = DayFilters.safeParse({ from: filters.from, to: filters.to });
  if (!days.success) return data({ filters, page: null, errors: zodFieldErrors(days.error) }, { status: 422, headers: NO_STORE });
  const result = await console.admin("audit.list", {
    query: {
      ...Object.fromEntries(TEXT_FILTERS.map((f) => [f, filters[f]])),
      from: filters.from ? `${filters.from}T00:00:00.000Z` : undefined,
      to: filters.to ? `${filters.to}T23:59:59.999Z` : undefined,
      cursor: search.get("cursor") ?? undefined,
      limit: "25",
    },
  });
  if (!result.ok) {
    const details = result.error.details?.map((d) => ({ field: d.field.replace(/^query\./, ""), message: d.message }));
    const errors = details ? detailErrors(details, [...TEXT_FILTERS, ...DATE_FILTERS]) : { form: result.error.message };
    return data({ filters, page: null, errors }, { status: result.status, headers: NO_STORE });
  }
  return data({ filters, page: result.body, errors: {} as Record<string, string> }, { headers: NO_STORE });
}

/** The console page of an audit entry's target, where the console has one. */
function targetPath(e: AuditEntry): string | null {
  if (!e.targetId) return null;
  const org = e.organizationId ? `/console/organizations/${e.organizationId}` : null;
  const id = encodeURIComponent(e.targetId);
  switch (e.targetType) {
    case "organization":
      return `/console/organizations/${id}`;
    case "user":
      return org && `${org}/users/${id}`;
    case "client":
      return org && `${org}/clients/${id}`;
    case "application":
      return org && `${org}/applications/${id}`;
    case "role":
      return org && `${org}/roles/${id}`;
    default:
      return null;
  }
}

function Target({ entry }: { entry: AuditEntry }) {
  const path = targetPath(entry);
  const id = entry.targetId ? <code>{entry.targetId}</code> : null;
  return <>{entry.targetType ?? ""}{id ? <> {path ? <Link to={path}>{id}</Link> : id}</> : null}</>;
}

export default function Audit() {
  const { filters, page, errors } = useLoaderData<typeof loader>();
  const { search } = useLocation();
  const { t } = useTranslation("console");
  return (
    <>
      <h1>{t("audit.title")}</h1>
      <Form method="get" className="panel filters" aria-labelledby="filters-title">
        <h2 id="filters-title">{t("audit.filters")}</h2>
        <div className="filter-grid">
          {TEXT_FILTERS.map((f) => (
            <TextField key={f} name={f} label={t(`audit.${f}`)} defaultValue={filters[f]} error={errors[f]} suggestions={f === "eventType" ? AUDIT_EVENT_FAMILIES : undefined} />
          ))}
          {DATE_FILTERS.map((f) => (
            <TextField key={f} name={f} type="date" label={t(`audit.${f}`)} hint={t("audit.utcDay")} defaultValue={filters[f]} error={errors[f]} />
          ))}
        </div>
        <button type="submit" className="button button-inline">{t("audit.apply")}</button>
      </Form>
      {errors.form ? <Notice kind="error">{errors.form}</Notice> : null}
      {page ? (
        <>
          <ListTable
            rows={page.data}
            rowKey={(e) => e.id}
            columns={[...auditColumns(t), { header: t("audit.target"), cell: (e) => <Target entry={e} /> }]}
          />
          <CursorPager search={search} cursor={page.cursor} />
        </>
      ) : null}
    </>
  );
}
