import { RemixI18Next } from "remix-i18next/server";
import { FALLBACK_LANGUAGE, SUPPORTED_LANGUAGES, isSupportedLanguage, resources, type Language } from "~/i18n/config";

const NO_MATCH = "__none__";

/** Accept-Language negotiation; NO_MATCH tells "the browser asked for nothing we have". */
const negotiator = new RemixI18Next({
  detection: { supportedLanguages: [...SUPPORTED_LANGUAGES], fallbackLanguage: NO_MATCH, order: ["header"] },
  i18next: { resources, fallbackLng: FALLBACK_LANGUAGE },
});

/**
 * The language of an end-user page: the OIDC `ui_locales` parameter first, then the browser's
 * Accept-Language, then the organization's default, then English.
 */
export async function resolveLanguage(request: Request, options: { uiLocales?: unknown; organizationDefault?: string | null }): Promise<Language> {
  if (typeof options.uiLocales === "string") {
    for (const tag of options.uiLocales.split(" ")) {
      const base = tag.toLowerCase().split("-")[0];
      if (isSupportedLanguage(base)) return base;
    }
  }
  const negotiated = await negotiator.getLocale(request);
  if (isSupportedLanguage(negotiated)) return negotiated;
  const base = negotiated.split("-")[0];
  if (isSupportedLanguage(base)) return base;
  return isSupportedLanguage(options.organizationDefault) ? options.organizationDefault : FALLBACK_LANGUAGE;
}

/** A translation function for server-side text (HTTP error bodies, mail subjects). */
export function translator(language: Language) {
  return negotiator.getFixedT(language, "login");
}
