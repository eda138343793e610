import { useTranslation } from "react-i18next";
import { AuthCard, FormMessage, type BrandingView } from "./auth-card";

/**
 * The end of a reset that cannot continue a sign-in in this browser: what happened and the next
 * step, never a dead end. `home` is the application's own address (see applicationHome).
 */
export function PasswordChangedCard({ branding, home, clientName }: { branding: BrandingView | null; home: string | null; clientName: string | null }) {
  const { t } = useTranslation();
  return (
    <AuthCard branding={branding} title={t("reset.changedTitle")}>
      <FormMessage tone="info">{t("reset.changedBody")}</FormMessage>
      <BackToApplication home={home} clientName={clientName} />
    </AuthCard>
  );
}

/** A reset link that names no usable link of a known organization: plain, with the way on. */
export function UnknownResetLink({ home }: { home: string | null }) {
  const { t } = useTranslation();
  return (
    <AuthCard branding={null} title={t("reset.problemTitle")}>
      <FormMessage tone="error">{t("reset.invalid")}</FormMessage>
      <BackToApplication home={home} clientName={null} />
    </AuthCard>
  );
}

/** The next step after a flow that ends on Porta's page: the application's own address when known. */
export function BackToApplication({ home, clientName }: { home: string | null; clientName: string | null }) {
  const { t } = useTranslation();
  if (!home) return <p>{t("reset.backToApplication")}</p>;
  return (
    <p>
      <a className="button" href={home}>
        {clientName ? t("reset.signInTo", { client: clientName }) : t("reset.signInAgain")}
      </a>
    </p>
  );
}
