import { data, type LoaderFunctionArgs, type MetaFunction } from "@remix-run/node";
import { AUDIT_EVENT_FAMILIES } from "~/schemas/audit-events";
import { Form, Link, useLoaderData, useLocation } from "@remix-run/react";
import { useEffect, useRef, useState } from "react";
import { useTranslation } from "react-i18next";
import { consoleHeaders, NO_STORE, requireConsole } from "~/.server/console/page";
import { z } from "zod";
import { detailErrors, zodFieldErrors } from "~/components/console/forms";
import { NamedRef } from "~/components/console/audit-names";
import { auditColumns } from "~/components/console/history";
import { ListTable } from "~/components/console/list-table";
import { CursorPager, Notice, TextField } from "~/components/console/ui";

export const headers = consoleHeaders;
export const meta: MetaFunction = () => [{ title: "Audit log · Porta console" }];

/** Filters by name (decision 039): an organization by name or slug, an actor or a target by email or name. */
const NAME_FILTERS = ["organization", "actor", "target"] as const;
type NameFilter = (typeof NAME_FILTERS)[number];
const TEXT_FILTERS = ["eventType", ...NAME_FILTERS] as const;
/** Filters by id come from links (an entity's history, an entry's page) and ride along unseen. */
const ID_FILTERS = ["organizationId", "actorId", "targetType", "targetId"] as const;
const DATE_FILTERS = ["from", "to"] as const;
const ALL_FILTERS = [...TEXT_FILTERS, ...ID_FILTERS, ...DATE_FILTERS] as const;
type Filter = (typeof ALL_FILTERS)[number];

/** Dates are whole UTC days: "from" starts at its midnight, "to" ends at its last millisecond. */
const DayFilters = z
  .object({ from: z.union([z.literal(""), z.iso.date("must be a date")]), to: z.union([z.literal(""), z.iso.date("must be a date")]) })
  .refine((d) => !d.from || !d.to || d.from <= d.to, { path: ["to"], message: "must not be before the start date" });

interface Subject {
  type: string;
  id: string;
  name: string;
  detail: string | null;
}

export async function loader(args: LoaderFunctionArgs) {
  const console = await requireConsole(args);
  const search = new URL(args.request.url).searchParams;
  const filters = Object.fromEntries(ALL_FILTERS.map((f) => [f, search.get(f)?.trim() ?? ""])) as Record<Filter, string>;
  const noMatch: NameFilter[] = [];
  const candidates: Partial<Record<NameFilter, Subject[]>> = {};
  const days = DayFilters.safeParse({ from: filters.from, to: filters.to });
  if (!days.success) return data({ filters, page: null, errors: zodFieldErrors(days.error), noMatch, candidates }, { status: 422, headers: NO_STORE });
  const result = await console.admin("audit.list", {
    query: {
      ...Object.fromEntries([...TEXT_FILTERS, ...ID_FILTERS].map((f) => [f, filters[f] || undefined])),
      from: filters.from ? `${filters.from}T00:00:00.000Z` : undefined,
      to: filters.to ? `${filters.to}T23:59:59.999Z` : undefined,
      cursor: search.get("cursor") ?? undefined,
      limit: "25",
    },
  });
  if (!result.ok) {
    const details = result.error.details?.map((d) => ({ field: d.field.replace(/^query\./, ""), message: d.message }));
    const errors = details ? detailErrors(details, [...TEXT_FILTERS, ...DATE_FILTERS]) : { form: result.error.message };
    // A name that matches nothing: say so in the page's language and offer what it is part of.
    for (const field of NAME_FILTERS) {
      if (!details?.some((d) => d.field === field) || result.status !== 422) continue;
      noMatch.push(field);
      delete errors[field];
      if (filters[field].length < 2) continue;
      const found = await console.admin("audit.searchSubjects", { query: { role: field, q: filters[field], limit: "10" } });
      if (found.ok) candidates[field] = found.body.data;
    }
    return data({ filters, page: null, errors, noMatch, candidates }, { status: result.status, headers: NO_STORE });
  }
  return data({ filters, page: result.body, errors: {} as Record<string, string>, noMatch, candidates }, { headers: NO_STORE });
}

/**
 * A name filter: a plain text field the server resolves; with JavaScript, what the text is part
 * of is offered while typing (the console's suggestion endpoint, into the field's datalist).
 */
function SubjectField({ name, defaultValue, error, hint }: { name: NameFilter; defaultValue: string; error: string | undefined; hint: string }) {
  const { t } = useTranslation("console");
  const [suggestions, setSuggestions] = useState<string[]>([]);
  const pending = useRef<AbortController | null>(null);
  useEffect(() => () => pending.current?.abort(), []);
  const suggest = (q: string) => {
    pending.current?.abort();
    if (q.trim().length < 2) return setSuggestions([]);
    const controller = new AbortController();
    pending.current = controller;
    fetch(`/console/audit/subjects?role=${name}&q=${encodeURIComponent(q.trim())}`, { signal: controller.signal })
      .then((res) => (res.ok ? (res.json() as Promise<{ data: Subject[] }>) : { data: [] }))
      .then((body) => setSuggestions([...new Set(body.data.map((s) => (s.type === "organization" ? (s.detail ?? s.name) : s.name)))]))
      .catch(() => undefined);
  };
  return <TextField name={name} label={t(`audit.${name}`)} hint={hint} defaultValue={defaultValue} error={error} suggestions={suggestions} onChange={suggest} />;
}

/** Links that set a name filter to one of the things its text is part of. */
function Candidates({ field, subjects, search }: { field: NameFilter; subjects: Subject[]; search: string }) {
  const { t } = useTranslation("console");
  if (subjects.length === 0) return null;
  const linkTo = (s: Subject) => {
    const params = new URLSearchParams(search);
    params.delete("cursor");
    params.set(field, s.type === "organization" ? (s.detail ?? s.name) : s.name);
    return `?${params.toString()}`;
  };
  return (
    <nav className="panel candidates" aria-label={t("audit.didYouMean", { field: t(`audit.${field}`) })}>
      <h2>{t("audit.didYouMean", { field: t(`audit.${field}`) })}</h2>
      <ul>
        {subjects.map((s) => (
          <li key={`${s.type}:${s.id}`}>
            <Link to={linkTo(s)} title={s.id}>{s.name}</Link> <span className="hint">{t(`audit.types.${s.type}`, { defaultValue: s.type })}{s.detail ? ` · ${s.detail}` : ""}</span>
          </li>
        ))}
      </ul>
    </nav>
  );
}

/** A refused sign-in for an address no account has: the address tried, as text. */
function AttemptedEmail({ data }: { data: unknown }) {
  const email = data && typeof data === "object" && "email" in data ? (data as { email: unknown }).email : null;
  return <>{typeof email === "string" ? email : "—"}</>;
}

export default function Audit() {
  const { filters, page, errors, noMatch, candidates } = useLoaderData<typeof loader>();
  const { search } = useLocation();
  const { t } = useTranslation("console");
  const idFilters = ID_FILTERS.filter((f) => filters[f]);
  const withoutIds = new URLSearchParams(search);
  for (const f of [...ID_FILTERS, "cursor"]) withoutIds.delete(f);
  return (
    <>
      <h1>{t("audit.title")}</h1>
      <Form method="get" className="panel filters" aria-labelledby="filters-title">
        <h2 id="filters-title">{t("audit.filters")}</h2>
        <div className="filter-grid">
          {NAME_FILTERS.map((f) => (
            <SubjectField key={`${f}:${filters[f]}`} name={f} defaultValue={filters[f]} hint={t(`audit.${f}Hint`)} error={noMatch.includes(f) ? t(`audit.noMatch.${f}`, { text: filters[f] }) : errors[f]} />
          ))}
          <TextField name="eventType" label={t("audit.eventType")} defaultValue={filters.eventType} error={errors.eventType} suggestions={AUDIT_EVENT_FAMILIES} />
          {DATE_FILTERS.map((f) => (
            <TextField key={f} name={f} type="date" label={t(`audit.${f}`)} hint={t("audit.utcDay")} defaultValue={filters[f]} error={errors[f]} />
          ))}
        </div>
        {idFilters.map((f) => (
          <input key={f} type="hidden" name={f} value={filters[f]} />
        ))}
        {idFilters.length > 0 ? (
          <p className="hint">
            {t("audit.byId", { filters: idFilters.map((f) => `${t(`audit.${f}`)} ${filters[f]}`).join(", ") })} <Link to={`?${withoutIds.toString()}`}>{t("audit.clearIds")}</Link>
          </p>
        ) : null}
        <button type="submit" className="button button-inline">{t("audit.apply")}</button>
      </Form>
      {errors.form ? <Notice kind="error">{errors.form}</Notice> : null}
      {NAME_FILTERS.map((f) => (candidates[f] ? <Candidates key={f} field={f} subjects={candidates[f]} search={search} /> : null))}
      {page ? (
        <>
          <ListTable
            rows={page.data}
            rowKey={(e) => e.id}
            caption={t("audit.title")}
            columns={[
              ...auditColumns(t),
              { header: t("audit.organization"), cell: (e) => (e.organizationId ? <NamedRef type="organization" id={e.organizationId} named={e.names.organization} /> : "—") },
              { header: t("audit.target"), cell: (e) => (e.targetId ? <NamedRef type={e.targetType} id={e.targetId} named={e.names.target} /> : <AttemptedEmail data={e.data} />) },
            ]}
          />
          <CursorPager search={search} cursor={page.cursor} />
        </>
      ) : null}
    </>
  );
}
