import { FALLBACK_LANGUAGE, isSupportedLanguage, resources } from "./config";

type LoginMessages = (typeof resources)["en"]["login"];

/** A page's <title> in the language its loader chose (meta functions run outside i18next's hooks). */
export function pageTitle(language: unknown, pick: (messages: LoginMessages) => string): string {
  const lang = typeof language === "string" && isSupportedLanguage(language) ? language : FALLBACK_LANGUAGE;
  return pick(resources[lang].login as LoginMessages);
}
