import { useEffect, useState } from "react";
import { useTranslation } from "react-i18next";
import { AuthCard, FormMessage, type BrandingView } from "./auth-card";
import { BackToApplication } from "./password-changed";

type Refusal =
  | { view: "expired"; branding: BrandingView | null; home: string | null; clientName: string | null }
  | { view: "unavailable"; method: string; uid: string; branding: BrandingView }
  | { view: "csrf"; uid: string; branding: BrandingView };

const REFUSALS = new Set(["expired", "unavailable", "csrf"]);

/** Whether a page's data is a refusal of the interaction gate (every interaction page's loader and action may answer one). */
export function isGateRefusal<T extends { view: string }>(page: T): page is Extract<T, { view: Refusal["view"] }> {
  return REFUSALS.has(page.view);
}

/** The pages shown when an interaction endpoint refuses: expired, method unavailable, stale form. */
export function GateRefusalPage({ refusal }: { refusal: Refusal }) {
  const { t } = useTranslation();
  if (refusal.view === "expired") {
    // Branded when the sign-in's organization is still known; the next step is the application's
    // own sign-in start (Porta cannot restart an authorization the client owns).
    return (
      <AuthCard branding={refusal.branding} title={t("expired.title")}>
        <p>{t("expired.body")}</p>
        {refusal.home ? <BackToApplication home={refusal.home} clientName={refusal.clientName} /> : <GoBack />}
      </AuthCard>
    );
  }
  const back = (
    <p className="links">
      <a href={`/interaction/${refusal.uid}`}>{t("methodUnavailable.back")}</a>
    </p>
  );
  if (refusal.view === "unavailable") {
    return (
      <AuthCard branding={refusal.branding} title={t("methodUnavailable.title")}>
        <FormMessage tone="error">{t(`methodUnavailable.${refusal.method}`)}</FormMessage>
        {back}
      </AuthCard>
    );
  }
  return (
    <AuthCard branding={refusal.branding} title={t("methodUnavailable.back")}>
      <FormMessage tone="error">{t("csrf.invalid")}</FormMessage>
      {back}
    </AuthCard>
  );
}

/**
 * When nothing about the sign-in is known (a made-up or long-gone address), the page the browser
 * came from is the way onward: usually the application that sent it here. Shown once the page runs
 * script (history is the browser's); without script the text above says where to go.
 */
function GoBack() {
  const { t } = useTranslation();
  const [canGoBack, setCanGoBack] = useState(false);
  useEffect(() => setCanGoBack(window.history.length > 1), []);
  if (!canGoBack) return null;
  return (
    <p>
      <button type="button" className="button" onClick={() => window.history.back()}>
        {t("expired.goBack")}
      </button>
    </p>
  );
}
