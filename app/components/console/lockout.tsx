import { useTranslation } from "react-i18next";

/**
 * Whether a lock is running at `now`. The page's loader passes its own `now`, so that the
 * server's render and the browser's agree on the state.
 */
export function isLocked(lockedUntil: string | null, now: number): lockedUntil is string {
  return lockedUntil !== null && Date.parse(lockedUntil) > now;
}

/** "Locked until …" in the page's language (the console's moments are UTC), or nothing when no lock is running. */
export function LockedUntil({ lockedUntil, now }: { lockedUntil: string | null; now: number }) {
  const { t, i18n } = useTranslation("console");
  if (!isLocked(lockedUntil, now)) return null;
  const time = `${new Date(lockedUntil).toLocaleString(i18n.language, { timeZone: "UTC", dateStyle: "medium", timeStyle: "short" })} UTC`;
  return (
    <time dateTime={lockedUntil} className="badge badge-warning">
      {t("lockout.lockedUntil", { time })}
    </time>
  );
}
