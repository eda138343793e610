import { data, redirect, type ActionFunctionArgs, type LoaderFunctionArgs, type MetaFunction } from "@remix-run/node";
import { useActionData, useLoaderData } from "@remix-run/react";
import { AccountPage, AccountProblem, type AccountNotice } from "~/components/account/account-page";
import { pageTitle } from "~/i18n/page-title";
import { accountOverview } from "~/.server/account/overview";
import { openAccountPage, stepUp, type OpenAccountPage } from "~/.server/account/page";
import { changePassword, setFirstPassword, type PasswordOutcome } from "~/.server/account/password";
import { requestEmailChange } from "~/.server/account/email";
import { removeAccountPasskey, renameAccountPasskey } from "~/.server/account/passkeys";
import { removeAccountLink } from "~/.server/account/federated";
import { revokeAccountApp } from "~/.server/account/apps";
import { updateProfile } from "~/.server/account/profile";
import { endAccountSession, endOtherAccountSessions } from "~/.server/account/sessions";
import { regenerateRecoveryCodes, removeTotp, setEmailCodes } from "~/.server/account/two-factor";
import { interactionHeaders, NO_STORE } from "~/.server/sign-in/page";

export const meta: MetaFunction<typeof loader> = ({ data }) => [{ title: pageTitle(data?.language, (m) => m.account.title) }, { name: "robots", content: "noindex" }];
export const headers = interactionHeaders;

/**
 * GET/POST /{slug}/account: a person's own profile, password, second factors, sessions and
 * recent security events, signed in with the organization's own session (decision 038). Every
 * change is a plain form (no script needed), checked against this browser's CSRF token, done by
 * a service in app/.server/account, audited there; sensitive ones need a recent sign-in.
 */
const NOTICES = [
  "profile",
  "email_sent",
  "password",
  "password_set",
  "totp_added",
  "totp_removed",
  "email_on",
  "email_off",
  "passkey_added",
  "passkey_renamed",
  "passkey_removed",
  "link_removed",
  "app_revoked",
  "session_ended",
  "others_ended",
] as const;

export async function loader(args: LoaderFunctionArgs) {
  const page = await openAccountPage(args, "overview");
  if (!page.open) return page.response;
  const search = new URL(args.request.url).searchParams;
  const notice = NOTICES.find((n) => n === search.get("done")) ?? null;
  const count = Number(search.get("count") ?? 0) || 0;
  const overview = await accountOverview(page.ctx, page.access, page.frame.language);
  return data({ view: "account" as const, ...page.frame, ...overview, notice, count }, { headers: NO_STORE });
}

const done = (page: OpenAccountPage, notice: AccountNotice, count?: number) =>
  redirect(`/${page.frame.slug}/account?done=${notice}${count === undefined ? "" : `&count=${count}`}`, { status: 303, headers: NO_STORE });

const refused = (status: number, error: "notAllowed" | "gone" | "appGone" | "passkeyName") => data({ view: "refused" as const, error }, { status, headers: NO_STORE });

function passwordAnswer(page: OpenAccountPage, outcome: PasswordOutcome, notice: AccountNotice, context: ActionFunctionArgs["context"]) {
  if (outcome.ok) return done(page, notice);
  switch (outcome.reason) {
    case "step_up":
      return stepUp(context, page, "overview");
    case "rate_limited":
      return data({ view: "password" as const, error: "rateLimited" as const, minutes: Math.ceil(outcome.retryAfterSeconds / 60) }, { status: 429, headers: { ...NO_STORE, "Retry-After": String(outcome.retryAfterSeconds) } });
    case "wrong_password":
      return data({ view: "password" as const, error: "wrong" as const }, { status: 422, headers: NO_STORE });
    case "weak_password":
      return data({ view: "password" as const, error: "weak" as const, problem: outcome.problem, limit: outcome.limit }, { status: 422, headers: NO_STORE });
    default:
      // The account gained or lost its password since the page was shown: show it again as it is now.
      return redirect(`/${page.frame.slug}/account`, { status: 303, headers: NO_STORE });
  }
}

export async function action(args: ActionFunctionArgs) {
  const page = await openAccountPage(args, "overview");
  if (!page.open) return page.response;
  const { access, form, ctx } = page;
  const text = (name: string) => String(form.get(name) ?? "");
  switch (form.get("intent")) {
    case "profile": {
      const outcome = await updateProfile(ctx, access, { givenName: text("givenName"), familyName: text("familyName"), locale: text("locale") });
      return outcome.ok ? done(page, "profile") : data({ view: "profile" as const, fields: outcome.fields }, { status: 422, headers: NO_STORE });
    }
    case "email": {
      const outcome = await requestEmailChange(ctx, access, { newEmail: form.get("newEmail"), language: page.frame.language });
      if (outcome.ok) return done(page, "email_sent");
      if (outcome.reason === "step_up") return stepUp(args.context, page, "overview");
      if (outcome.reason === "rate_limited") {
        return data({ view: "email" as const, error: "rateLimited" as const, minutes: Math.ceil(outcome.retryAfterSeconds / 60) }, { status: 429, headers: { ...NO_STORE, "Retry-After": String(outcome.retryAfterSeconds) } });
      }
      return data({ view: "email" as const, error: outcome.problem }, { status: 422, headers: NO_STORE });
    }
    case "password": {
      const input = { next: text("newPassword"), endOtherSessions: form.get("endOtherSessions") === "on" };
      return passwordAnswer(page, await changePassword(ctx, access, { ...input, current: text("currentPassword") }), "password", args.context);
    }
    case "set-password":
      return passwordAnswer(page, await setFirstPassword(ctx, access, { next: text("newPassword"), endOtherSessions: form.get("endOtherSessions") === "on" }), "password_set", args.context);
    case "email-codes": {
      const on = text("value") === "on";
      const outcome = await setEmailCodes(ctx, access, on);
      if (outcome.ok) return done(page, on ? "email_on" : "email_off");
      return outcome.reason === "step_up" ? stepUp(args.context, page, "overview") : refused(403, "notAllowed");
    }
    case "totp-remove": {
      const outcome = await removeTotp(ctx, access);
      if (outcome.ok) return done(page, "totp_removed");
      return outcome.reason === "step_up" ? stepUp(args.context, page, "overview") : refused(403, "notAllowed");
    }
    case "recovery-codes": {
      const outcome = await regenerateRecoveryCodes(ctx, access);
      // Shown once, in this answer: never in a URL or a redirect.
      if (outcome.ok) return data({ view: "codes" as const, codes: outcome.codes }, { headers: NO_STORE });
      return outcome.reason === "step_up" ? stepUp(args.context, page, "overview") : refused(403, "notAllowed");
    }
    case "passkey-rename": {
      const outcome = await renameAccountPasskey(ctx, access, text("passkey"), text("name"));
      if (outcome.ok) return done(page, "passkey_renamed");
      if (outcome.reason === "step_up") return stepUp(args.context, page, "overview");
      return outcome.reason === "invalid_name" ? refused(422, "passkeyName") : refused(404, "gone");
    }
    case "passkey-remove": {
      const outcome = await removeAccountPasskey(ctx, access, text("passkey"));
      if (outcome.ok) return done(page, "passkey_removed");
      if (outcome.reason === "step_up") return stepUp(args.context, page, "overview");
      return outcome.reason === "not_allowed" ? refused(403, "notAllowed") : refused(404, "gone");
    }
    case "federated-remove": {
      const outcome = await removeAccountLink(ctx, access, text("link"));
      if (outcome.ok) return done(page, "link_removed");
      return outcome.reason === "step_up" ? stepUp(args.context, page, "overview") : refused(404, "gone");
    }
    case "app-revoke": {
      const outcome = await revokeAccountApp(ctx, access, text("client"));
      return outcome.ok ? done(page, "app_revoked") : refused(404, "appGone");
    }
    case "end-session": {
      const outcome = await endAccountSession(ctx, access, text("session"));
      return outcome.ok ? done(page, "session_ended") : refused(outcome.reason === "current" ? 409 : 404, "gone");
    }
    case "end-other-sessions":
      return done(page, "others_ended", await endOtherAccountSessions(ctx, access));
    default:
      return data({ view: "refused" as const, error: "notAllowed" as const }, { status: 400, headers: NO_STORE });
  }
}

export default function Account() {
  const page = useLoaderData<typeof loader>();
  const result = useActionData<typeof action>();
  if (page.view !== "account") return <AccountProblem page={page} />;
  if (result && "view" in result && result.view === "csrf") return <AccountProblem page={result} />;
  return <AccountPage page={page} result={result ?? null} />;
}
