import { PassThrough } from "node:stream";
import {
  createReadableStreamFromReadable,
  type ActionFunctionArgs,
  type AppLoadContext,
  type EntryContext,
  type LoaderFunctionArgs,
} from "@remix-run/node";
import { isRouteErrorResponse, RemixServer } from "@remix-run/react";
import { isbot } from "isbot";
import { createInstance, type i18n as I18n } from "i18next";
import { renderToPipeableStream } from "react-dom/server";
import { I18nextProvider, initReactI18next } from "react-i18next";
import { isDatabaseUnavailable } from "./.server/db/errors";
import { RETRY_AFTER_SECONDS } from "./.server/errors";
import { NonceContext } from "./components/nonce";
import { ResponseStatusContext } from "./components/response-status";
import { FALLBACK_LANGUAGE, i18nOptions, isSupportedLanguage } from "./i18n/config";

const ABORT_DELAY = 5_000;

/** Requests (by their load context) whose loader or action failed because the database did not answer. */
const failedForDatabase = new WeakSet<AppLoadContext>();

/**
 * Errors thrown by loaders, actions and rendering become one JSON log line (Remix's default
 * prints a stack to stderr). An aborted request (the client went away) is not an error.
 */
export function handleError(error: unknown, { request, context }: LoaderFunctionArgs | ActionFunctionArgs) {
  if (request.signal.aborted) return;
  const path = new URL(request.url).pathname;
  // Remix hands over its own 4xx too (no route matches): the client's mistake, not ours.
  if (isRouteErrorResponse(error) && error.status < 500) {
    context.services.logger.info({ status: error.status, path }, "route not found or refused");
    return;
  }
  if (isDatabaseUnavailable(error)) {
    // The page is rendered after this, from errors a production build has already sanitized.
    failedForDatabase.add(context);
    context.services.logger.warn({ path }, "database unavailable: a page answered 503");
    return;
  }
  context.services.logger.error({ err: error, path }, "route error");
}

/**
 * Pages decide their language in their loader or action (ui_locales, Accept-Language,
 * organization); an action's answer is what a POST shows, so its language comes first.
 */
function languageOf(context: EntryContext): string {
  const { actionData, loaderData } = context.staticHandlerContext;
  const data = [...Object.values(loaderData ?? {}), ...Object.values(actionData ?? {})] as Array<{ language?: unknown } | null>;
  const language = data.reverse().find((d) => d && typeof d === "object" && isSupportedLanguage(d.language as string))?.language;
  return typeof language === "string" ? language : FALLBACK_LANGUAGE;
}

/**
 * One initialized i18next per language, shared by every page rendered in it: creating and
 * initializing one per request was ~10 % of a sign-in page's CPU, measured. Rendering only
 * reads an instance (nothing calls changeLanguage or adds resources on the server), and the
 * languages are the few supported ones, so the map stays that small.
 */
const i18nByLanguage = new Map<string, Promise<I18n>>();
function i18nFor(language: string): Promise<I18n> {
  let found = i18nByLanguage.get(language);
  if (!found) {
    const i18n = createInstance();
    found = i18n
      .use(initReactI18next)
      .init({ ...i18nOptions, lng: language })
      .then(() => i18n);
    // A failed init is not kept: the next page tries again.
    found.catch(() => i18nByLanguage.delete(language));
    i18nByLanguage.set(language, found);
  }
  return found;
}

export default async function handleRequest(
  request: Request,
  responseStatusCode: number,
  responseHeaders: Headers,
  remixContext: EntryContext,
  loadContext: AppLoadContext,
) {
  const nonce = loadContext.cspNonce;
  // A page that failed because the database did not answer says so to machines too: 503, retry soon.
  if (failedForDatabase.has(loadContext)) {
    responseStatusCode = 503;
    responseHeaders.set("Retry-After", String(RETRY_AFTER_SECONDS));
  }
  const i18n = await i18nFor(languageOf(remixContext));
  const waitForAll = isbot(request.headers.get("user-agent") ?? "");
  return new Promise<Response>((resolve, reject) => {
    let shellRendered = false;
    const { pipe, abort } = renderToPipeableStream(
      <I18nextProvider i18n={i18n}>
        <NonceContext.Provider value={nonce}>
          <ResponseStatusContext.Provider value={responseStatusCode}>
            <RemixServer context={remixContext} url={request.url} abortDelay={ABORT_DELAY} nonce={nonce} />
          </ResponseStatusContext.Provider>
        </NonceContext.Provider>
      </I18nextProvider>,
      {
        nonce,
        [waitForAll ? "onAllReady" : "onShellReady"]() {
          shellRendered = true;
          const body = new PassThrough();
          responseHeaders.set("Content-Type", "text/html; charset=utf-8");
          resolve(new Response(createReadableStreamFromReadable(body), { headers: responseHeaders, status: responseStatusCode }));
          pipe(body);
        },
        onShellError(error: unknown) {
          reject(error);
        },
        onError(error: unknown) {
          responseStatusCode = 500;
          // Errors after the shell are logged by the server; before it, Remix's boundary shows them.
          if (shellRendered) loadContext.services.logger.error({ err: error }, "render error");
        },
      },
    );
    setTimeout(abort, ABORT_DELAY);
  });
}
