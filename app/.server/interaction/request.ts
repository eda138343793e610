import type { AppLoadContext } from "@remix-run/node";
import { resolveLanguage } from "../i18n";
import { brandingOf, type Branding } from "./branding";
import { InteractionExpiredError, loadInteraction, type InteractionContext } from "./context";
import type { Language } from "~/i18n/config";

/** What every interaction page shows around its form. */
export interface PageFrame {
  language: Language;
  uid: string;
  csrf: string;
  branding: Branding;
  clientName: string;
}

export type Loaded =
  | { ok: true; context: InteractionContext; frame: PageFrame }
  | { ok: false; language: Language };

/** Loads the interaction and the page frame, or says the request expired (in the browser's language). */
export async function loadInteractionPage(request: Request, context: AppLoadContext, uid: string): Promise<Loaded> {
  const { services, req, res } = context;
  try {
    const interaction = await loadInteraction(services, req, res, uid);
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
        csrf: services.csrf.tokenFor(uid),
        branding: brandingOf(interaction.organization),
        clientName: interaction.client.name,
      },
    };
  } catch (error) {
    if (!(error instanceof InteractionExpiredError)) throw error;
    return { ok: false, language: await resolveLanguage(request, {}) };
  }
}

export function requestMeta(context: AppLoadContext, endpoint: string) {
  return { ip: context.req.ip ?? null, requestId: context.requestId, endpoint };
}

/** Interaction pages are personal and short-lived: never cached, never framed. */
export const NO_STORE = { "Cache-Control": "no-store" };
