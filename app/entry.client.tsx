import { RemixBrowser } from "@remix-run/react";
import { createInstance } from "i18next";
import { StrictMode, startTransition } from "react";
import { hydrateRoot } from "react-dom/client";
import { I18nextProvider, initReactI18next } from "react-i18next";
import { FALLBACK_LANGUAGE, i18nOptions, isSupportedLanguage } from "./i18n/config";

async function hydrate() {
  const lang = document.documentElement.lang;
  const i18n = createInstance();
  await i18n.use(initReactI18next).init({ ...i18nOptions, lng: isSupportedLanguage(lang) ? lang : FALLBACK_LANGUAGE });
  startTransition(() => {
    hydrateRoot(
      document,
      <I18nextProvider i18n={i18n}>
        <StrictMode>
          <RemixBrowser />
        </StrictMode>
      </I18nextProvider>,
    );
  });
}

void hydrate();
