import { data, redirect, type ActionFunctionArgs, type LoaderFunctionArgs, type MetaFunction } from "@remix-run/node";
import { Link, useActionData, useLoaderData } from "@remix-run/react";
import { useTranslation } from "react-i18next";
import type { OperationInput } from "~/.server/admin/http/operation-table";
import type { AdminResult } from "~/.server/console/gateway";
import { consoleHeaders, NO_STORE, requireConsole, requireConsoleForm, type Console } from "~/.server/console/page";
import { detailErrors, intentIn, zodFieldErrors } from "~/components/console/forms";
import { ActionForm, ConfirmAction, Notice, SectionNav, SelectField } from "~/components/console/ui";
import { HistorySection, historyQuery } from "~/components/console/history";
import { UserBlocks } from "~/components/console/user-blocks";
import { UserConflictView, UserEditForm, UserSessions, type UserEditValues } from "~/components/console/user-detail";
import { UserPasskeys } from "~/components/console/user-passkeys";
import { UserFederatedIdentities } from "~/components/console/user-federated-identities";
import { IMPERSONATION_FIELDS, UserImpersonation, type IssuedImpersonation } from "~/components/console/user-impersonation";
import { changedFields, conflictErrors, formVersion, UPDATE_FIELDS, updateUserInput } from "~/components/console/user-forms";
import { UserUpdateSchema, type User } from "~/schemas/user";

export const headers = consoleHeaders;
export const meta: MetaFunction = () => [{ title: "User · Porta console" }];

export async function loader(args: LoaderFunctionArgs) {
  const console = await requireConsole(args);
  const params = { orgId: args.params.id!, userId: args.params.userId! };
  const user = await console.admin("users.get", { params });
  if (!user.ok) throw data({ message: user.error.code }, { status: user.status === 422 ? 404 : user.status });
  const byId = { params: { id: params.userId } };
  const search = new URL(args.request.url).searchParams;
  const [twoFactor, passkeys, roles, orgRoles, effective, claimValues, apps, sessions, history, federated, clients] = await Promise.all([
    console.admin("twoFactor.getStatus", byId),
    console.admin("passkeys.list", byId),
    console.admin("userRoles.list", byId),
    console.admin("roles.list", { query: { organizationId: params.orgId, limit: "100" } }),
    console.admin("userRoles.getEffectivePermissions", byId),
    console.admin("customClaims.getValuesForUser", { ...byId, query: { limit: "100" } }),
    console.admin("applications.list", { query: { organizationId: params.orgId, limit: "20" } }),
    console.admin("sessions.list", { query: { userId: params.userId, limit: "100" } }),
    console.admin("users.getHistory", { params, query: historyQuery(args.request.url, 20) }),
    console.admin("federatedIdentities.list", byId),
    console.admin("clients.list", { query: { organizationId: params.orgId, status: "active", limit: "100" } }),
  ]);
  // The claims a value can be set for: those of the organization's applications.
  const definitions = apps.ok
    ? (
        await Promise.all(
          apps.body.data.map(async (app) => {
            const claims = await console.admin("customClaims.list", { params: { appId: app.id }, query: { limit: "100" } });
            return claims.ok ? claims.body.data.map((c) => ({ value: `${app.id}:${c.id}:${c.claimType}`, label: `${app.name} · ${c.claimName} (${c.claimType})` })) : [];
          }),
        )
      ).flat()
    : [];
  return data(
    {
      user: user.body,
      version: user.version!,
      sessions: sessions.ok ? sessions.body.data : [],
      sessionsError: sessions.ok ? null : sessions.error.message,
      history: history.ok ? history.body : null,
      twoFactor: twoFactor.ok ? twoFactor.body : null,
      passkeys: passkeys.ok ? passkeys.body.data : null,
      federated: federated.ok ? federated.body.data : null,
      roles: roles.ok ? roles.body.data : [],
      orgRoles: orgRoles.ok ? orgRoles.body.data.map((r) => ({ id: r.id, name: r.name })) : [],
      permissions: effective.ok ? effective.body.permissions : [],
      claimValues: claimValues.ok ? claimValues.body.data : [],
      definitions,
      clients: clients.ok ? clients.body.data.map((c) => ({ id: c.id, name: c.name })) : [],
      done: search.get("done"),
      now: Date.now(),
    },
    { headers: NO_STORE },
  );
}

type Ids = { orgId: string; userId: string };
type ClaimValueInput = NonNullable<OperationInput<"customClaims.setValue">["body"]>["value"];

/** Each button of the page: the Admin API operation it runs. */
const INTENTS: Record<string, (console: Console, ids: Ids, form: FormData) => Promise<AdminResult<unknown>>> = {
  activate: (c, ids) => c.admin("users.activate", { params: ids }),
  unlock: (c, ids) => c.admin("users.unlock", { params: ids }),
  clearBlock: (c, ids, form) => c.admin("users.clearBlock", { params: { ...ids, blockId: String(form.get("block") ?? "") } }),
  deactivate: (c, ids) => c.admin("users.deactivate", { params: ids }),
  verifyEmail: (c, ids) => c.admin("users.verifyEmail", { params: ids }),
  setPassword: (c, ids, form) => c.admin("users.setPassword", { params: ids, body: { password: String(form.get("password") ?? "") } }),
  clearPassword: (c, ids) => c.admin("users.clearPassword", { params: ids }),
  reportCompromised: (c, ids) => c.admin("users.reportCompromisedPassword", { params: ids, body: {} }),
  resetTwoFactor: (c, ids) => c.admin("twoFactor.reset", { params: { id: ids.userId }, body: {} }),
  disableTwoFactor: (c, ids) => c.admin("twoFactor.disable", { params: { id: ids.userId } }),
  deletePasskey: (c, ids, form) => c.admin("passkeys.delete", { params: { id: ids.userId, passkeyId: String(form.get("passkeyId") ?? "") } }),
  deleteFederatedIdentity: (c, ids, form) => c.admin("federatedIdentities.delete", { params: { id: ids.userId, linkId: String(form.get("linkId") ?? "") } }),
  assignRole: (c, ids, form) => c.admin("userRoles.assign", { params: { id: ids.userId, roleId: String(form.get("roleId") ?? "") } }),
  removeRole: (c, ids, form) => c.admin("userRoles.remove", { params: { id: ids.userId, roleId: String(form.get("roleId") ?? "") } }),
  revokeSessions: (c, ids) => c.admin("sessions.revokeForUser", { params: { id: ids.userId } }),
  revokeSession: async (c, ids, form) => {
    // This page revokes this user's sessions only, whatever id is posted.
    const id = String(form.get("sessionId") ?? "");
    const own = await c.admin("sessions.list", { query: { userId: ids.userId, limit: "100" } });
    if (!own.ok) return own;
    if (!own.body.data.some((s) => s.id === id)) return { ok: false, status: 404, error: { code: "not_found", message: "This user has no such session." } };
    return c.admin("sessions.revoke", { params: { id } });
  },
  setClaim: (c, ids, form) => {
    const [appId = "", claimId = "", type = "string"] = String(form.get("claim") ?? "").split(":");
    return c.admin("customClaims.setValue", { params: { appId, claimId, userId: ids.userId }, body: { value: claimValueOf(type, String(form.get("claimValue") ?? "")) as ClaimValueInput } });
  },
  deleteClaim: (c, ids, form) => {
    const [appId = "", claimId = ""] = String(form.get("claim") ?? "").split(":");
    return c.admin("customClaims.deleteValue", { params: { appId, claimId, userId: ids.userId } });
  },
};

/** A typed value as the person wrote it: text for string claims, JSON for the others. */
/** What the person typed, as the claim's JSON value (the Admin API checks it against the claim's type). */
function claimValueOf(type: string, typed: string): unknown {
  if (type === "string") return typed;
  try {
    return JSON.parse(typed);
  } catch {
    return typed;
  }
}

type Edit =
  | { kind: "invalid"; values: UserEditValues; errors: Record<string, string> }
  | { kind: "conflict"; values: UserEditValues; current: User };
interface ActionResult {
  message: string | null;
  codes: string[] | null;
  edit: Edit | null;
  impersonation: { issued: IssuedImpersonation | null; errors: Record<string, string> } | null;
}
const answer = (result: Partial<ActionResult>, status = 200) => data<ActionResult>({ message: null, codes: null, edit: null, impersonation: null, ...result }, { status, headers: NO_STORE });

/** Acting as the user: the token is shown in this one answer (never in a URL or a redirect). */
async function impersonate(console: Console, ids: Ids, form: FormData) {
  const result = await console.admin("users.impersonate", {
    params: { id: ids.userId },
    body: { clientId: String(form.get("clientId") ?? ""), reason: String(form.get("reason") ?? ""), minutes: Number(form.get("minutes") ?? 15) },
  });
  if (result.ok) return answer({ impersonation: { issued: result.body, errors: {} } });
  const errors = result.status === 422 ? detailErrors(result.error.details, IMPERSONATION_FIELDS) : { form: result.error.message };
  return answer({ impersonation: { issued: null, errors } }, result.status);
}

/** Saves the profile with the version the page was loaded with; a 409 shows the conflict view instead of overwriting. */
async function updateProfile(console: Console, ids: Ids, form: FormData) {
  const values = updateUserInput(form);
  const parsed = UserUpdateSchema.safeParse(values);
  if (!parsed.success) return answer({ edit: { kind: "invalid", values, errors: zodFieldErrors(parsed.error) } }, 422);
  const version = formVersion(form);
  const saved = await console.admin("users.get", { params: ids });
  if (!saved.ok) return answer({ edit: { kind: "invalid", values, errors: { form: saved.error.message } } }, saved.status);
  // A page older than the saved user (or a form without its version) never overwrites.
  if (saved.version !== version) return answer({ edit: { kind: "conflict", values, current: saved.body } }, 409);
  const body = changedFields(parsed.data, saved.body);
  if (Object.keys(body).length === 0) return redirect(`/console/organizations/${ids.orgId}/users/${ids.userId}?done=updated`);
  // If-Match still guards the moment between that read and this write.
  const result = await console.admin("usersById.update", { params: { id: ids.userId }, body, ifMatch: version });
  if (result.ok) return redirect(`/console/organizations/${ids.orgId}/users/${ids.userId}?done=updated`);
  if (result.status === 409 && result.error.code === "etag_mismatch") {
    const current = await console.admin("users.get", { params: ids });
    if (current.ok) return answer({ edit: { kind: "conflict", values, current: current.body } }, 409);
  }
  if (result.status === 409) return answer({ edit: { kind: "invalid", values, errors: conflictErrors(result.error, UPDATE_FIELDS) } }, 409);
  if (result.status === 422) return answer({ edit: { kind: "invalid", values, errors: detailErrors(result.error.details, UPDATE_FIELDS) } }, 422);
  return answer({ edit: { kind: "invalid", values, errors: { form: result.error.message } } }, result.status);
}

export async function action(args: ActionFunctionArgs) {
  const { console, form } = await requireConsoleForm(args);
  const ids = { orgId: args.params.id!, userId: args.params.userId! };
  const intent = String(form.get("intent"));
  if (intent === "update") return updateProfile(console, ids, form);
  if (intent === "delete") {
    const deleted = await console.admin("users.delete", { params: ids });
    if (!deleted.ok) return answer({ message: deleted.error.message }, deleted.status);
    return redirect(`/console/organizations/${ids.orgId}/users?done=deleted`);
  }
  if (intent === "impersonate") return impersonate(console, ids, form);
  if (intent === "regenerateCodes") {
    // The new codes appear in this one answer only.
    const result = await console.admin("twoFactor.regenerateRecoveryCodes", { params: { id: ids.userId }, body: {} });
    if (!result.ok) return answer({ message: result.error.message }, result.status);
    return answer({ codes: result.body.codes });
  }
  const run = intentIn(INTENTS, intent);
  if (!run) return answer({ message: "unknown action" }, 400);
  const result = await run(console, ids, form);
  if (!result.ok) {
    const message = result.error.details?.map((d) => d.message).join("; ") || result.error.message;
    return answer({ message }, result.status);
  }
  return redirect(`/console/organizations/${ids.orgId}/users/${ids.userId}?done=${intent}`);
}

/** Notices of the actions this page gained later live in the userDetail section. */
const DETAIL_DONE = ["created", "updated", "revokeSession", "reportCompromised"];
const doneKey = (done: string) =>
  done === "unlock" ? "lockout.done" : done === "clearBlock" ? "blocks.done" : DETAIL_DONE.includes(done) ? `userDetail.done.${done}` : `users.done.${done}`;

export default function UserPage() {
  const { user, version, sessions, sessionsError, history, twoFactor, passkeys, federated, roles, orgRoles, permissions, claimValues, definitions, clients, done, now } = useLoaderData<typeof loader>();
  const result = useActionData<typeof action>();
  const { t } = useTranslation("console");
  const yes = (value: boolean) => (value ? t("common.yes") : t("common.no"));
  const base = `/console/organizations/${user.organizationId}/users/${user.id}`;
  const assignable = orgRoles.filter((r) => !roles.some((held) => held.id === r.id));
  return (
    <>
      <p className="breadcrumb"><Link to={`/console/organizations/${user.organizationId}/users`}>{t("users.title")}</Link></p>
      <h1>{user.email}</h1>
      <SectionNav
        sections={[
          { id: "details-title", label: t("users.details") },
          { id: "edit-user-title", label: t("userDetail.edit") },
          { id: "password-title", label: t("users.password") },
          { id: "roles-title", label: t("roles.roles") },
          { id: "claims-title", label: t("claims.title") },
          twoFactor ? { id: "tf-title", label: t("users.twoFactor") } : null,
          { id: "sessions-title", label: t("userDetail.sessions.title") },
          user.status === "active" ? { id: "impersonate-title", label: t("impersonation.title") } : null,
          { id: "history-title", label: t("history.title") },
          { id: "delete-title", label: t("userDetail.delete.title") },
        ]}
      />
      {done ? <Notice kind="info">{t(doneKey(done))}</Notice> : null}
      {result?.message ? <Notice kind="error">{result.message}</Notice> : null}
      {result?.codes ? (
        <section className="panel secret" aria-labelledby="codes-title">
          <h2 id="codes-title">{t("users.newCodes")}</h2>
          <p>{t("users.newCodesText")}</p>
          <ul className="recovery-codes" aria-labelledby="codes-title">
            {result.codes.map((c) => (
              <li key={c}><code>{c}</code></li>
            ))}
          </ul>
        </section>
      ) : null}
      <section className="panel" aria-labelledby="details-title">
        <h2 id="details-title">{t("users.details")}</h2>
        <dl className="facts">
          <dt>{t("common.name")}</dt>
          <dd>{[user.givenName, user.familyName].filter(Boolean).join(" ") || "—"}</dd>
          <dt>{t("common.status")}</dt>
          <dd>{t(`users.status.${user.status}`)}</dd>
          <dt>{t("lockout.signIn")}</dt>
          <dd>
            <UserBlocks blocks={user.blocks} now={now} />
          </dd>
          <dt>{t("users.emailVerified")}</dt>
          <dd>{yes(user.emailVerified)}</dd>
          <dt>{t("users.hasPassword")}</dt>
          <dd>{user.passwordScheme?.startsWith("imported:") ? t("users.importedPassword", { scheme: user.passwordScheme.slice("imported:".length) }) : yes(user.hasPassword)}</dd>
        </dl>
        <div className="actions">
          {user.status === "active" ? (
            <ConfirmAction intent="deactivate" label={t("users.deactivate")} question={t("users.confirmDeactivate", { email: user.email })} />
          ) : (
            <ConfirmAction intent="activate" label={t("users.activate")} question={t("users.confirmActivate", { email: user.email })} />
          )}
          {!user.emailVerified ? <ConfirmAction intent="verifyEmail" label={t("users.verifyEmail")} question={t("users.confirmVerify", { email: user.email })} /> : null}
          <ConfirmAction intent="revokeSessions" label={t("users.revokeSessions")} question={t("users.confirmRevokeSessions", { email: user.email })} danger />
          <a className="button button-inline button-secondary" href={`${base}/export`} download>{t("users.export")}</a>
        </div>
      </section>

      {result?.edit?.kind === "conflict" ? (
        <UserConflictView current={result.edit.current} values={result.edit.values} />
      ) : (
        <UserEditForm user={user} version={version} values={result?.edit?.values ?? null} errors={result?.edit?.kind === "invalid" ? result.edit.errors : {}} />
      )}

      <section className="panel" aria-labelledby="password-title">
        <h2 id="password-title">{t("users.password")}</h2>
        <ActionForm intent="setPassword" className="inline-form">
          <div className="field">
            <label htmlFor="password">{t("users.newPassword")}</label>
            <input id="password" name="password" type="password" autoComplete="new-password" required />
          </div>
          <button type="submit" className="button button-inline">{t("users.setPassword")}</button>
        </ActionForm>
        {user.hasPassword ? <ConfirmAction intent="clearPassword" label={t("users.clearPassword")} question={t("users.confirmClearPassword", { email: user.email })} danger /> : null}
        {user.hasPassword ? (
          <ConfirmAction intent="reportCompromised" label={t("userDetail.compromised.button")} question={t("userDetail.compromised.confirm", { email: user.email })} danger />
        ) : null}
      </section>

      <section className="panel" aria-labelledby="roles-title">
        <h2 id="roles-title">{t("roles.roles")}</h2>
        {roles.length === 0 ? <p>{t("common.none")}</p> : null}
        <ul className="plain">
          {roles.map((r) => (
            <li key={r.id}>
              <code>{r.name}</code>{" "}
              <ConfirmAction intent="removeRole" label={t("users.removeRole", { role: r.name })} question={t("users.confirmRemoveRole", { role: r.name, email: user.email })} fields={{ roleId: r.id }} />
            </li>
          ))}
        </ul>
        {assignable.length > 0 ? (
          <ActionForm intent="assignRole" className="inline-form">
            <SelectField name="roleId" label={t("users.assignRole")} options={assignable.map((r) => ({ value: r.id, label: r.name }))} defaultValue={assignable[0]!.id} />
            <button type="submit" className="button button-inline">{t("users.assign")}</button>
          </ActionForm>
        ) : null}
        <h3>{t("users.effectivePermissions")}</h3>
        {permissions.length === 0 ? (
          <p>{t("common.none")}</p>
        ) : (
          <ul className="plain">
            {permissions.map((p) => (
              <li key={p.id}>
                <code>{p.name}</code> <span className="muted">{`(${p.grantedBy.join(", ")})`}</span>
              </li>
            ))}
          </ul>
        )}
      </section>

      <section className="panel" aria-labelledby="claims-title">
        <h2 id="claims-title">{t("claims.title")}</h2>
        {claimValues.length === 0 ? <p>{t("common.none")}</p> : null}
        <ul className="plain">
          {claimValues.map((v) => (
            <li key={v.claimId}>
              <code>{v.claimName}</code> = <code>{JSON.stringify(v.value)}</code>{" "}
              <ConfirmAction intent="deleteClaim" label={t("users.removeClaim", { claim: v.claimName })} question={t("users.confirmRemoveClaim", { claim: v.claimName })} fields={{ claim: `${v.applicationId}:${v.claimId}` }} />
            </li>
          ))}
        </ul>
        {definitions.length > 0 ? (
          <ActionForm intent="setClaim" className="inline-form">
            <SelectField name="claim" label={t("users.claim")} options={definitions} defaultValue={definitions[0]!.value} />
            <div className="field">
              <label htmlFor="claimValue">{t("users.claimValue")}</label>
              <input id="claimValue" name="claimValue" required />
            </div>
            <button type="submit" className="button button-inline">{t("users.setClaim")}</button>
          </ActionForm>
        ) : null}
      </section>

      {twoFactor ? (
        <section className="panel" aria-labelledby="tf-title">
          <h2 id="tf-title">{t("users.twoFactor")}</h2>
          <dl className="facts">
            <dt>{t("dashboard.totp")}</dt>
            <dd>{yes(twoFactor.totp.enrolled)}</dd>
            <dt>{t("dashboard.emailOtp")}</dt>
            <dd>{yes(twoFactor.emailOtp.enabled)}</dd>
            <dt>{t("users.recoveryCodes")}</dt>
            <dd>{t("users.recoveryLeft", { remaining: twoFactor.recoveryCodes.remaining, total: twoFactor.recoveryCodes.total })}</dd>
          </dl>
          <div className="actions">
            <ConfirmAction intent="resetTwoFactor" label={t("users.resetTwoFactor")} question={t("users.confirmReset", { email: user.email })} danger />
            {twoFactor.totp.enrolled || twoFactor.emailOtp.enabled ? (
              <ConfirmAction intent="disableTwoFactor" label={t("users.disableTwoFactor")} question={t("users.confirmDisable", { email: user.email })} danger />
            ) : null}
            {twoFactor.totp.enrolled ? (
              <ConfirmAction intent="regenerateCodes" label={t("users.regenerateCodes")} question={t("users.confirmRegenerate", { email: user.email })} />
            ) : null}
          </div>
        </section>
      ) : null}

      {passkeys ? <UserPasskeys passkeys={passkeys} email={user.email} /> : null}
      {federated ? <UserFederatedIdentities links={federated} /> : null}

      <UserSessions sessions={sessions} error={sessionsError} />
      {user.status === "active" ? <UserImpersonation clients={clients} errors={result?.impersonation?.errors ?? {}} issued={result?.impersonation?.issued ?? null} /> : null}
      <HistorySection page={history} targetId={user.id} />

      <section className="panel" aria-labelledby="delete-title">
        <h2 id="delete-title">{t("userDetail.delete.title")}</h2>
        <p>{t("userDetail.delete.text")}</p>
        <ConfirmAction intent="delete" label={t("userDetail.delete.button")} question={t("userDetail.delete.confirm", { email: user.email })} danger />
      </section>
    </>
  );
}
