import { data, redirect, type AppLoadContext, type HeadersFunction } from "@remix-run/node";
import { resolveLanguage } from "../i18n";
import type { OperationId, OperationOutput } from "../admin/http/operation-table";
import { callAdmin, type AdminInput, type AdminResult } from "./gateway";
import { csrfSubject, currentSession, LANGUAGE_COOKIE, readCookie, type ConsoleSession } from "./session";
import { startSignIn } from "./sign-in";
import type { Language } from "~/i18n/config";
import { readForm } from "../http/form";

/** What every console loader and action works with. */
export interface Console {
  sessionId: string;
  session: ConsoleSession;
  language: Language;
  csrf: string;
  /** Runs an Admin API operation as this admin; id, input and result are typed by the operation. */
  admin<Id extends OperationId>(operationId: Id, input?: AdminInput<Id>): Promise<AdminResult<OperationOutput<Id>>>;
}

interface Args {
  request: Request;
  context: AppLoadContext;
}

export const NO_STORE = { "Cache-Control": "no-store" };

/**
 * The signed-in console of this request. Without a session, a page load starts the sign-in
 * (and comes back to this page); a POST goes back to the console's start.
 */
export async function requireConsole({ request, context }: Args): Promise<Console> {
  const { services } = context;
  const language = await consoleLanguage(request);
  const signInAgain = async () => {
    const url = new URL(request.url);
    const returnTo = request.method === "GET" ? url.pathname + url.search : "/console";
    const start = await startSignIn(services, returnTo, language);
    return redirect(start.location, { headers: { "Set-Cookie": start.cookie, ...NO_STORE } });
  };
  const current = await currentSession(services, request);
  if (!current) throw await signInAgain();
  const { id, session } = current;
  return {
    sessionId: id,
    session,
    language,
    csrf: services.csrf.tokenFor(csrfSubject(id)),
    admin: async <Id extends OperationId>(operationId: Id, input?: AdminInput<Id>) => {
      const result = await callAdmin(context, session.accessToken, operationId, input);
      // The session's token was refused (revoked by a sign-out elsewhere, the admin deactivated):
      // the person signs in again rather than meeting errors on every page.
      if (!result.ok && result.status === 401) throw await signInAgain();
      return result;
    },
  };
}

/** The console's language: the person's choice (a cookie) first, then Accept-Language. */
export function consoleLanguage(request: Request): Promise<Language> {
  return resolveLanguage(request, { uiLocales: readCookie(request, LANGUAGE_COOKIE) });
}

const FORM_MAX_BYTES = 256 * 1024;

/** For actions: the console plus the posted form, refused with 403 unless it carries the session's CSRF token. */
export async function requireConsoleForm(args: Args, maxBytes = FORM_MAX_BYTES): Promise<{ console: Console; form: FormData }> {
  const console = await requireConsole(args);
  // A form is parsed whole in memory: refuse what is larger than this page could have sent (and
  // close the connection, whose unread body would otherwise poison the next request on it).
  const length = Number(args.request.headers.get("content-length"));
  if (!Number.isSafeInteger(length) || length > maxBytes) {
    args.context.res.setHeader("Connection", "close");
    throw data({ message: "too_large" }, { status: 413, headers: NO_STORE });
  }
  const form = await readForm(args.request);
  if (!args.context.services.csrf.verify(csrfSubject(console.sessionId), form.get("csrf"))) {
    throw data({ message: "csrf" }, { status: 403, headers: NO_STORE });
  }
  return { console, form };
}

/** Field errors of a 422 from the Admin API, keyed by field. */
export function fieldErrors(result: AdminResult<unknown>): Record<string, string> {
  if (result.ok || !result.error.details) return {};
  return Object.fromEntries(result.error.details.map((d) => [d.field, d.message]));
}

/**
 * The `headers` export of console pages: Remix drops a loader's or action's headers from an HTML
 * response unless the route exports `headers`, and console pages (a client secret shown once
 * above all) must never be cached.
 */
export const consoleHeaders: HeadersFunction = () => NO_STORE;
