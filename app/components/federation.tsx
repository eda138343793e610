import { useTranslation } from "react-i18next";
import { AuthCard, FormMessage } from "~/components/auth-card";
import type { BrandingView } from "~/components/auth-card";

/** Why a sign-in through another identity provider ended without signing in (decision 046). */
export type FederationFailure = "expired" | "refused" | "unreachable" | "invalid" | "no_account" | "unverified_email" | "inactive" | "unknown" | "rate_limited";

/** The page a failed upstream sign-in shows: what happened, in the page's language, and the way back to the sign-in. */
export function FederationFailurePage({
  branding,
  reason,
  provider,
  backTo,
  minutes,
}: {
  branding: BrandingView | null;
  reason: FederationFailure;
  provider: string | null;
  backTo: string | null;
  /** How long a rate-limited sign-in waits. */
  minutes?: number;
}) {
  const { t } = useTranslation();
  const name = provider ?? t("federation.theProvider");
  // Too many failures: the words every other sign-in method uses.
  const message = reason === "rate_limited" ? t("signIn.rateLimited", { count: minutes ?? 1 }) : t(`federation.reason.${reason}`, { provider: name });
  return (
    <AuthCard branding={branding} title={t("federation.title", { provider: name })}>
      <FormMessage tone="error">{message}</FormMessage>
      {backTo ? (
        <p className="links">
          <a href={backTo}>{t("federation.back")}</a>
        </p>
      ) : null}
    </AuthCard>
  );
}

/** One button per enabled upstream provider; each is a form of its own, so no script is needed. */
export function FederatedButtons({ uid, csrf, providers, label }: { uid: string; csrf: string; providers: Array<{ id: string; name: string }>; label: (provider: string) => string }) {
  return (
    <div className="federated-providers">
      {providers.map((provider) => (
        <form key={provider.id} method="post" action={`/interaction/${uid}/federated`}>
          <input type="hidden" name="csrf" value={csrf} />
          <input type="hidden" name="provider" value={provider.id} />
          <button className="button button-secondary" type="submit">
            {label(provider.name)}
          </button>
        </form>
      ))}
    </div>
  );
}
