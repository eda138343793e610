import deConsole from "../../public/locales/de/console.json";
import de from "../../public/locales/de/login.json";
import enConsole from "../../public/locales/en/console.json";
import en from "../../public/locales/en/login.json";

/** Languages of the end-user pages; every string comes from public/locales/<lng>/*.json. */
export const SUPPORTED_LANGUAGES = ["en", "de"] as const;
export type Language = (typeof SUPPORTED_LANGUAGES)[number];
export const FALLBACK_LANGUAGE: Language = "en";
export const DEFAULT_NAMESPACE = "login";

export const resources = { en: { login: en, console: enConsole }, de: { login: de, console: deConsole } } as const;

export function isSupportedLanguage(value: string | null | undefined): value is Language {
  return SUPPORTED_LANGUAGES.includes(value as Language);
}

export const i18nOptions = {
  supportedLngs: [...SUPPORTED_LANGUAGES],
  fallbackLng: FALLBACK_LANGUAGE,
  defaultNS: DEFAULT_NAMESPACE,
  ns: [DEFAULT_NAMESPACE, "console"],
  resources,
  interpolation: { escapeValue: false },
};
