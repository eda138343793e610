import i18next, { type TFunction } from "i18next";
import de from "../public/locales/de/email.json";
import en from "../public/locales/en/email.json";
import { FALLBACK_LANGUAGE, type Language } from "../app/i18n/config";

/** Every string of every email comes from public/locales/<lng>/email.json. */
export const EMAIL_NAMESPACE = "email";
export const emailResources = { en: { [EMAIL_NAMESPACE]: en }, de: { [EMAIL_NAMESPACE]: de } } as const;

type Leaves<T, Prefix extends string = ""> = {
  [K in keyof T & string]: T[K] extends string ? `${Prefix}${K}` : Leaves<T[K], `${Prefix}${K}.`>;
}[keyof T & string];
type WithoutPluralSuffix<K> = K extends `${infer Base}_one` ? Base : K extends `${infer Base}_other` ? Base : K;

/** A key of email.json, with i18next's plural suffixes (`_one`, `_other`) folded into their base key. */
export type EmailKey = WithoutPluralSuffix<Leaves<typeof en>>;
export type EmailText = (key: EmailKey, values?: Record<string, string | number>) => string;

// One private i18next instance: the emails must not share state with the request-scoped page i18n.
const instance = i18next.createInstance();
void instance.init({
  resources: emailResources,
  lng: FALLBACK_LANGUAGE,
  fallbackLng: FALLBACK_LANGUAGE,
  ns: [EMAIL_NAMESPACE],
  defaultNS: EMAIL_NAMESPACE,
  // React escapes what it renders; subjects are plain header text, sanitized by the mailer.
  interpolation: { escapeValue: false },
  // With inline resources, init completes synchronously, so `t` is usable at once.
  initImmediate: false,
  returnNull: false,
});

const cache = new Map<Language, TFunction>();

/** The text function of one language; `organization` and other values are interpolated. */
export function emailText(language: Language): EmailText {
  let t = cache.get(language);
  if (!t) {
    t = instance.getFixedT(language, EMAIL_NAMESPACE);
    cache.set(language, t);
  }
  const fixed = t;
  return (key, values) => fixed(key, values ?? {}) as string;
}
