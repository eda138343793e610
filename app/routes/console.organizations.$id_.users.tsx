import { data, redirect, type ActionFunctionArgs, type LoaderFunctionArgs, type MetaFunction } from "@remix-run/node";
import { Form, Link, useActionData, useLoaderData, useLocation } from "@remix-run/react";
import { useState, type FormEvent } from "react";
import { useTranslation } from "react-i18next";
import { consoleHeaders, NO_STORE, requireConsole, requireConsoleForm, type Console } from "~/.server/console/page";
import { ListTable } from "~/components/console/list-table";
import { detailErrors, text, zodFieldErrors } from "~/components/console/forms";
import { Csrf, CursorPager, Notice, SelectField, TextField } from "~/components/console/ui";
import { PendingInvitations } from "~/components/console/invitations";
import { CreateUserForm } from "~/components/console/user-create";
import { LockedUntil } from "~/components/console/lockout";
import { conflictErrors, CREATE_FIELDS, createFormErrors, createUserInput } from "~/components/console/user-forms";
import { InviteSchema, UserCreateSchema } from "~/schemas/user";

export const headers = consoleHeaders;
export const meta: MetaFunction = () => [{ title: "Users · Porta console" }];

export async function loader(args: LoaderFunctionArgs) {
  const console = await requireConsole(args);
  const orgId = args.params.id!;
  const search = new URL(args.request.url).searchParams;
  const q = search.get("q") ?? "";
  // The organization page's "locked" figure links here with locked=true.
  const locked = search.get("locked") === "true";
  const [org, users, invitations] = await Promise.all([
    console.admin("organizations.get", { params: { id: orgId } }),
    console.admin("users.list", { params: { orgId }, query: { q: q.trim() || undefined, locked: locked ? "true" : undefined, cursor: search.get("cursor") ?? undefined, limit: "20" } }),
    console.admin("invitations.list", { params: { orgId }, query: { limit: "50" } }),
  ]);
  if (!org.ok) throw data({ message: org.error.code }, { status: org.status === 422 ? 404 : org.status });
  const done = search.get("done");
  return data({ org: org.body, q, locked, page: users.ok ? users.body : null, error: users.ok ? null : users.error.message, done, now: Date.now(), invitations: invitations.ok ? invitations.body : null }, { headers: NO_STORE });
}

function inviteInput(form: FormData) {
  const optional = (name: string) => text(form, name)?.trim() || undefined;
  return { email: text(form, "email") ?? "", givenName: optional("givenName"), familyName: optional("familyName"), locale: optional("locale") };
}

type Values = ReturnType<typeof inviteInput>;
type CreateValues = ReturnType<typeof createUserInput>;
type ActionResult =
  | { kind: "invalid"; values: Values; errors: Record<string, string> }
  | { kind: "createInvalid"; values: Omit<CreateValues, "password">; errors: Record<string, string> }
  | { kind: "preview"; values: Values; preview: { to: string; subject: string; text: string } }
  | { kind: "invited"; email: string; invitationSent: boolean }
  | { kind: "failed"; message: string };

/** The pending invitations' row actions: the Admin API operation each runs. */
const INVITATION_INTENTS = { resendInvitation: "invitations.resend", revokeInvitation: "invitations.revoke" } as const;

async function invitationAction(console: Console, orgId: string, intent: keyof typeof INVITATION_INTENTS, form: FormData) {
  const params = { orgId, invitationId: String(form.get("invitationId") ?? "") };
  const result = await console.admin(INVITATION_INTENTS[intent], { params });
  if (!result.ok) return data<ActionResult>({ kind: "failed", message: result.error.message }, { status: result.status, headers: NO_STORE });
  return redirect(`/console/organizations/${orgId}/users?done=${intent}`);
}

export async function action(args: ActionFunctionArgs) {
  const { console, form } = await requireConsoleForm(args);
  const orgId = args.params.id!;
  const intent = String(form.get("intent"));
  if (intent === "create") return createUser(console, orgId, form);
  if (intent === "resendInvitation" || intent === "revokeInvitation") return invitationAction(console, orgId, intent, form);
  const values = inviteInput(form);
  const parsed = InviteSchema.safeParse(values);
  if (!parsed.success) return data<ActionResult>({ kind: "invalid", values, errors: zodFieldErrors(parsed.error) }, { status: 422, headers: NO_STORE });
  if (form.get("intent") === "preview") {
    const preview = await console.admin("users.invitePreview", { params: { orgId }, body: parsed.data });
    if (preview.ok) return data<ActionResult>({ kind: "preview", values, preview: { to: preview.body.to, subject: preview.body.subject, text: preview.body.text } }, { headers: NO_STORE });
    return data<ActionResult>({ kind: "invalid", values, errors: preview.error.details ? detailErrors(preview.error.details, ["email", "givenName", "familyName", "locale"]) : { form: preview.error.message } }, { status: preview.status, headers: NO_STORE });
  }
  const invited = await console.admin("users.invite", { params: { orgId }, body: parsed.data });
  if (invited.ok) return data<ActionResult>({ kind: "invited", email: invited.body.email, invitationSent: invited.body.invitationSent }, { headers: NO_STORE });
  // The address's invitation is already on its way: said beside the field, in the page's language.
  if (invited.status === 409 && invited.error.code === "invitation_pending") return data<ActionResult>({ kind: "invalid", values, errors: { email: "@pending" } }, { status: 409, headers: NO_STORE });
  return data<ActionResult>({ kind: "invalid", values, errors: invited.error.details ? detailErrors(invited.error.details, ["email", "givenName", "familyName", "locale"]) : { form: invited.error.message } }, { status: invited.status, headers: NO_STORE });
}

/**
 * How many users the list covers. A filtered list stops counting at 1,000 matches and then says
 * "1,000+" (the Admin API's `totalIsLowerBound`), never a number it did not count.
 */
function UserTotal({ page, filtered, language }: { page: { total: number; totalIsLowerBound?: boolean | undefined }; filtered: boolean; language: string }) {
  const { t } = useTranslation("console");
  const total = page.total.toLocaleString(language);
  const label = page.totalIsLowerBound ? t("users.totalAtLeast", { total }) : t(filtered ? "users.totalFound" : "users.total", { count: page.total, total });
  return <p className="list-total">{label}</p>;
}

/** Creates the user directly (no invitation); the password, if any, never goes back into the page. */
async function createUser(console: Console, orgId: string, form: FormData) {
  const input = createUserInput(form);
  const { password: _password, ...values } = input;
  const invalid = (errors: Record<string, string>, status: number) => data<ActionResult>({ kind: "createInvalid", values, errors: createFormErrors(errors) }, { status, headers: NO_STORE });
  const parsed = UserCreateSchema.safeParse(input);
  if (!parsed.success) return invalid(zodFieldErrors(parsed.error), 422);
  const created = await console.admin("users.create", { params: { orgId }, body: parsed.data });
  if (created.ok) return redirect(`/console/organizations/${orgId}/users/${created.body.id}?done=created`);
  // A taken address is a 409: its message belongs beside the email field.
  if (created.status === 409) return invalid(conflictErrors(created.error, CREATE_FIELDS), 409);
  return invalid(created.error.details ? detailErrors(created.error.details, CREATE_FIELDS) : { form: created.error.message }, created.status);
}

export default function Users() {
  const { org, q, locked, page, error, done, now, invitations } = useLoaderData<typeof loader>();
  const result = useActionData<typeof action>();
  const { search } = useLocation();
  const { t, i18n } = useTranslation("console");
  const [clientErrors, setClientErrors] = useState<Record<string, string> | null>(null);
  const errors = clientErrors ?? (result?.kind === "invalid" ? result.errors : {});
  const emailError = errors.email === "@pending" ? t("invitations.pendingError") : errors.email;
  const values = result?.kind === "invalid" || result?.kind === "preview" ? result.values : undefined;

  function onSubmit(event: FormEvent<HTMLFormElement>) {
    const parsed = InviteSchema.safeParse(inviteInput(new FormData(event.currentTarget)));
    if (parsed.success) return setClientErrors(null);
    event.preventDefault();
    setClientErrors(zodFieldErrors(parsed.error));
  }

  return (
    <>
      <p className="breadcrumb"><Link to={`/console/organizations/${org.id}`}>{org.name}</Link></p>
      <h1>{t("users.title")}</h1>
      {done === "deleted" ? <Notice kind="info">{t("userDetail.deleted")}</Notice> : null}
      {done === "resendInvitation" || done === "revokeInvitation" ? <Notice kind="info">{t(`invitations.done.${done}`)}</Notice> : null}
      {result?.kind === "failed" ? <Notice kind="error">{result.message}</Notice> : null}
      {result?.kind === "invited" ? <Notice kind="info">{t(result.invitationSent ? "users.invited" : "users.invitedNotSent", { email: result.email })}</Notice> : null}
      <Form method="get" className="search" role="search">
        <label htmlFor="q">{t("users.searchLabel")}</label>
        <input id="q" name="q" type="search" defaultValue={q} />
        <label className="check">
          <input type="checkbox" name="locked" value="true" defaultChecked={locked} /> {t("lockout.onlyLocked")}
        </label>
        <button type="submit" className="button button-inline button-secondary">{t("common.search")}</button>
      </Form>
      {error ? <Notice kind="error">{error}</Notice> : null}
      {locked ? (
        <p>
          {t("lockout.filtered")} <Link to={`/console/organizations/${org.id}/users`}>{t("lockout.showAll")}</Link>
        </p>
      ) : null}
      {page && locked && page.data.length === 0 ? <p>{t("lockout.noneLocked")}</p> : null}
      {page && !(locked && page.data.length === 0) ? (
        <>
          <UserTotal page={page} filtered={Boolean(q) || locked} language={i18n.language} />
          <ListTable
            rows={page.data}
            rowKey={(u) => u.id}
            empty={q ? t("empty.usersSearch") : t("empty.users")}
            columns={[
              { header: t("users.email"), cell: (u) => <Link to={`/console/organizations/${org.id}/users/${u.id}`}>{u.email}</Link> },
              { header: t("common.name"), cell: (u) => [u.givenName, u.familyName].filter(Boolean).join(" ") },
              {
                header: t("common.status"),
                cell: (u) => (
                  <>
                    {t(`users.status.${u.status}`)} <LockedUntil lockedUntil={u.lockedUntil} now={now} />
                  </>
                ),
              },
            ]}
          />
          <CursorPager search={search} cursor={page.cursor} />
        </>
      ) : null}

      <PendingInvitations invitations={invitations?.data ?? null} />

      <div className="grid">
      <Form method="post" reloadDocument noValidate onSubmit={onSubmit} className="panel form" aria-labelledby="invite-title">
        <h2 id="invite-title">{t("users.invite")}</h2>
        {errors.form ? <Notice kind="error">{errors.form}</Notice> : null}
        <Csrf />
        <TextField name="email" label={t("users.email")} defaultValue={values?.email} error={emailError} required />
        <TextField name="givenName" label={t("users.givenName")} defaultValue={values?.givenName} error={errors.givenName} />
        <TextField name="familyName" label={t("users.familyName")} defaultValue={values?.familyName} error={errors.familyName} />
        <SelectField
          name="locale"
          label={t("users.locale")}
          options={[
            { value: "", label: t("users.localeDefault") },
            { value: "en", label: "English" },
            { value: "de", label: "Deutsch" },
          ]}
          defaultValue={values?.locale ?? ""}
          error={errors.locale}
        />
        <div className="actions">
          <button type="submit" name="intent" value="preview" className="button button-inline button-secondary">{t("users.preview")}</button>
          <button type="submit" name="intent" value="invite" className="button button-inline">{t("users.send")}</button>
        </div>
      </Form>
      <CreateUserForm values={result?.kind === "createInvalid" ? result.values : undefined} errors={result?.kind === "createInvalid" ? result.errors : {}} />
      </div>
      {result?.kind === "preview" ? (
        <section className="panel" aria-labelledby="preview-title">
          <h2 id="preview-title">{t("users.previewTitle")}</h2>
          <p>{t("users.previewTo", { to: result.preview.to })}</p>
          <p><strong>{result.preview.subject}</strong></p>
          <pre className="mail-preview">{result.preview.text}</pre>
        </section>
      ) : null}
    </>
  );
}
