import type { AppLoadContext, HeadersFunction } from "@remix-run/node";
import { resolveLanguage } from "../i18n";
import { brandingForInteraction, brandingOf } from "../branding/pages";
import type { Branding, FlowEnd } from "~/schemas/branding";
import { InteractionExpiredError, loadInteraction, type InteractionContext } from "./interaction";
import type { Language } from "~/i18n/config";
import type { SignInContext } from "./method";

/** What every interaction page shows around its form. */
export interface PageFrame {
  language: Language;
  uid: string;
  csrf: string;
  branding: Branding;
  clientName: string;
}

/** What the expired page shows: whose sign-in it was, when that is still known, and the way back. */
export type ExpiredFrame = { language: Language } & Pick<FlowEnd, "branding" | "home" | "clientName">;

export type Loaded =
  | { ok: true; context: InteractionContext; frame: PageFrame }
  | { ok: false; expired: ExpiredFrame };

/**
 * Loads the interaction and the page frame, or says the request expired or ended: branded for its
 * organization while the uid's index remembers it (decision 035), in the browser's language.
 */
/** `ctx`: the door's unit of work for the request (door.ts). */
export async function loadInteractionPage(request: Request, context: AppLoadContext, ctx: SignInContext<"store" | "cache" | "oidc" | "config" | "csrf" | "clientDocuments">, uid: string): Promise<Loaded> {
  const { req, res } = context;
  try {
    const interaction = await loadInteraction(ctx, req, res, uid);
    const language = await resolveLanguage(request, {
      uiLocales: interaction.interaction.params.ui_locales,
      organizationDefault: interaction.organization.defaultLocale,
    });
    return {
      ok: true,
      context: interaction,
      frame: {
        language,
        uid,
        csrf: ctx.csrf.tokenFor(uid),
        branding: brandingOf(interaction.organization),
        clientName: interaction.client.name,
      },
    };
  } catch (error) {
    if (!(error instanceof InteractionExpiredError)) throw error;
    const { branding, home, clientName, defaultLocale, signIn } = await brandingForInteraction(ctx, uid);
    // Without the application's address, the organization's own sign-in is the way onward.
    return { ok: false, expired: { language: await resolveLanguage(request, { organizationDefault: defaultLocale }), branding, home: home ?? signIn, clientName: home ? clientName : null } };
  }
}

export function requestMeta(context: AppLoadContext, endpoint: string) {
  return { ip: context.req.ip ?? null, requestId: context.requestId, endpoint };
}

/**
 * True while Remix re-runs a page's loaders after a document POST to its action: the loader then
 * gets a GET request, but the Express request is still the POST. Loaders of POST endpoints use it
 * so that a refusal (403) the action answered is neither replaced by a loader's redirect nor
 * audited a second time by a loader that runs the same gate.
 */
export function isAfterAction(context: AppLoadContext): boolean {
  return context.req.method !== "GET" && context.req.method !== "HEAD";
}

/** Interaction pages are personal and short-lived: never cached, never framed. */
export const NO_STORE = { "Cache-Control": "no-store" };

/**
 * The `headers` export of every interaction page. Remix drops a loader's or action's headers from
 * an HTML response unless the route exports `headers`; this passes them on (the action's win, so
 * that a 429 keeps its Retry-After), which keeps the pages out of every cache.
 */
export const interactionHeaders: HeadersFunction = ({ loaderHeaders, actionHeaders }) => {
  const headers = new Headers();
  for (const source of [loaderHeaders, actionHeaders]) {
    source.forEach((value, name) => {
      if (name.toLowerCase() !== "set-cookie") headers.set(name, value);
    });
  }
  return headers;
};
