import { useTranslation } from "react-i18next";
import { AuthCard, FormMessage, type BrandingView } from "./auth-card";

/**
 * The end of a reset that cannot continue a sign-in in this browser: what happened and the next
 * step, never a dead end. `home` is the application's own address (see applicationHome).
 */
export function PasswordChangedCard({ branding, home, clientName }: { branding: BrandingView; home: string | null; clientName: string | null }) {
  const { t } = useTranslation();
  return (
    <AuthCard branding={branding} title={t("reset.changedTitle")}>
      <FormMessage tone="info">{t("reset.changedBody")}</FormMessage>
      {home ? (
        <p>
          <a className="button" href={home}>
            {clientName ? t("reset.signInTo", { client: clientName }) : t("reset.signInAgain")}
          </a>
        </p>
      ) : (
        <p>{t("reset.backToApplication")}</p>
      )}
    </AuthCard>
  );
}
