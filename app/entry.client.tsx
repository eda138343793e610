import { RemixBrowser } from "@remix-run/react";
import { createInstance } from "i18next";
import { StrictMode, startTransition, useEffect } from "react";
import { hydrateRoot } from "react-dom/client";
import { I18nextProvider, initReactI18next } from "react-i18next";
import { FALLBACK_LANGUAGE, i18nOptions, isSupportedLanguage } from "./i18n/config";

/**
 * Until the page has hydrated, the events a person makes (typing, clicks, sending a form) are
 * kept from React. With single fetch, RemixBrowser waits for its data to decode before it can
 * hydrate, and React answers an event on a page still hydrating by hydrating at once, which fails
 * while that wait is pending ("Root did not complete", React error #345; remix-run/remix#10214,
 * reproduced in e2e/hydration-race.spec.ts). The browser still does what the event does: the
 * pages work without script, so the typing, the link or the form goes on as it would.
 */
const DISCRETE_EVENTS = [
  "auxclick", "beforeinput", "blur", "cancel", "change", "click", "close", "compositionend", "compositionstart", "compositionupdate",
  "contextmenu", "copy", "cut", "dblclick", "dragend", "dragstart", "drop", "focus", "focusin", "focusout", "input", "invalid",
  "keydown", "keypress", "keyup", "mousedown", "mouseup", "paste", "pointercancel", "pointerdown", "pointerup", "reset",
  "select", "selectionchange", "selectstart", "submit", "textInput", "touchcancel", "touchend", "touchstart",
] as const;

function holdEventsUntilHydrated(): () => void {
  const hold = (event: Event) => event.stopPropagation();
  for (const type of DISCRETE_EVENTS) window.addEventListener(type, hold, { capture: true });
  return () => {
    for (const type of DISCRETE_EVENTS) window.removeEventListener(type, hold, { capture: true });
  };
}

/** Renders nothing; its effect runs once the whole document has hydrated. */
function Hydrated({ onHydrated }: { onHydrated: () => void }) {
  useEffect(onHydrated, [onHydrated]);
  return null;
}

async function hydrate() {
  const release = holdEventsUntilHydrated();
  const lang = document.documentElement.lang;
  const i18n = createInstance();
  await i18n.use(initReactI18next).init({ ...i18nOptions, lng: isSupportedLanguage(lang) ? lang : FALLBACK_LANGUAGE });
  startTransition(() => {
    hydrateRoot(
      document,
      <I18nextProvider i18n={i18n}>
        <StrictMode>
          <RemixBrowser />
          <Hydrated onHydrated={release} />
        </StrictMode>
      </I18nextProvider>,
    );
  });
}

void hydrate();
