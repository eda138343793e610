import { data, redirect, type ActionFunctionArgs, type LoaderFunctionArgs, type MetaFunction } from "@remix-run/node";
import { Link, useActionData, useLoaderData } from "@remix-run/react";
import { useTranslation } from "react-i18next";
import { consoleHeaders, NO_STORE, requireConsole, requireConsoleForm } from "~/.server/console/page";
import { ConfirmAction, Notice } from "~/components/console/ui";
import type { User } from "~/schemas/user";

export const headers = consoleHeaders;
export const meta: MetaFunction = () => [{ title: "User · Porta console" }];

interface TwoFactorStatus {
  totp: { enrolled: boolean; pending: boolean };
  emailOtp: { enabled: boolean };
  recoveryCodes: { remaining: number; total: number };
}

export async function loader(args: LoaderFunctionArgs) {
  const console = await requireConsole(args);
  const params = { orgId: args.params.id!, userId: args.params.userId! };
  const user = await console.admin<User>("users.get", { params });
  if (!user.ok) throw data({ message: user.error.code }, { status: user.status === 422 ? 404 : user.status });
  const twoFactor = await console.admin<TwoFactorStatus>("twoFactor.getStatus", { params: { id: params.userId } });
  const done = new URL(args.request.url).searchParams.get("done");
  return data({ user: user.body, twoFactor: twoFactor.ok ? twoFactor.body : null, done }, { headers: NO_STORE });
}

/** What each button runs: the Admin API operation and its path parameters. */
const INTENTS = {
  activate: { operationId: "users.activate", byUser: false },
  deactivate: { operationId: "users.deactivate", byUser: false },
  verifyEmail: { operationId: "users.verifyEmail", byUser: false },
  resetTwoFactor: { operationId: "twoFactor.reset", byUser: true },
  disableTwoFactor: { operationId: "twoFactor.disable", byUser: true },
} as const;

export async function action(args: ActionFunctionArgs) {
  const { console, form } = await requireConsoleForm(args);
  const orgId = args.params.id!;
  const userId = args.params.userId!;
  const intent = String(form.get("intent"));
  if (!(intent in INTENTS)) return data({ message: "unknown action" }, { status: 400, headers: NO_STORE });
  const { operationId, byUser } = INTENTS[intent as keyof typeof INTENTS];
  const result = await console.admin(operationId, {
    params: byUser ? { id: userId } : { orgId, userId },
    body: operationId === "twoFactor.reset" ? {} : undefined,
  });
  if (!result.ok) return data({ message: result.error.message }, { status: result.status, headers: NO_STORE });
  return redirect(`/console/organizations/${orgId}/users/${userId}?done=${intent}`);
}

export default function UserPage() {
  const { user, twoFactor, done } = useLoaderData<typeof loader>();
  const failed = useActionData<typeof action>();
  const { t } = useTranslation("console");
  const yes = (value: boolean) => (value ? t("common.yes") : t("common.no"));
  return (
    <>
      <p className="breadcrumb"><Link to={`/console/organizations/${user.organizationId}/users`}>{t("users.title")}</Link></p>
      <h1>{user.email}</h1>
      {done ? <Notice kind="info">{t(`users.done.${done}`)}</Notice> : null}
      {failed ? <Notice kind="error">{failed.message}</Notice> : null}
      <section className="panel" aria-labelledby="details-title">
        <h2 id="details-title">{t("users.details")}</h2>
        <dl className="facts">
          <dt>{t("common.name")}</dt>
          <dd>{[user.givenName, user.familyName].filter(Boolean).join(" ") || "—"}</dd>
          <dt>{t("common.status")}</dt>
          <dd>{t(`users.status.${user.status}`)}</dd>
          <dt>{t("users.emailVerified")}</dt>
          <dd>{yes(user.emailVerified)}</dd>
          <dt>{t("users.hasPassword")}</dt>
          <dd>{yes(user.hasPassword)}</dd>
        </dl>
        <div className="actions">
          {user.status === "active" ? (
            <ConfirmAction intent="deactivate" label={t("users.deactivate")} question={t("users.confirmDeactivate", { email: user.email })} danger />
          ) : (
            <ConfirmAction intent="activate" label={t("users.activate")} question={t("users.confirmActivate", { email: user.email })} />
          )}
          {!user.emailVerified ? <ConfirmAction intent="verifyEmail" label={t("users.verifyEmail")} question={t("users.confirmVerify", { email: user.email })} /> : null}
        </div>
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
          </div>
        </section>
      ) : null}
    </>
  );
}
