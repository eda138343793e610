import { useTranslation } from "react-i18next";
import { LOGIN_METHODS } from "~/schemas/login-methods";

export interface DailyFigure {
  date: string;
  total: number;
  byMethod: Record<string, number>;
}

/** Primary login methods, in stacking order, each with a fill a reader can tell apart from the others. */
const SERIES = LOGIN_METHODS.map((key) => ({ key, className: `series-${key.replace("_", "-")}` }));

const HEIGHT = 120;

/**
 * Logins per day as stacked columns. The drawing is decoration (aria-hidden); the same figures
 * are a table for screen readers and for anyone who wants the numbers, so nothing is only visual.
 */
export function DailyLoginsChart({ caption, days, language }: { caption: string; days: readonly DailyFigure[]; language: string }) {
  const { t } = useTranslation("console");
  const highest = Math.max(0, ...days.map((d) => d.total));
  // The drawing's scale: an empty series keeps a scale of one, but its axis says there were none.
  const max = Math.max(1, highest);
  const width = days.length * 10;
  const label = (date: string) => new Date(`${date}T00:00:00Z`).toLocaleDateString(language, { month: "short", day: "numeric", timeZone: "UTC" });
  return (
    <figure className="daily-chart">
      <figcaption>{caption}</figcaption>
      <svg viewBox={`0 0 ${width} ${HEIGHT}`} preserveAspectRatio="none" aria-hidden="true" className="daily-chart-drawing">
        {days.map((day, i) => {
          let y = HEIGHT;
          return SERIES.map((s) => {
            const h = ((day.byMethod[s.key] ?? 0) / max) * (HEIGHT - 4);
            y -= h;
            return h > 0 ? <rect key={`${day.date}-${s.key}`} x={i * 10 + 1} y={y} width={8} height={h} className={s.className} /> : null;
          });
        })}
      </svg>
      <p className="daily-chart-axis" aria-hidden="true">
        <span>{days.length > 0 ? label(days[0]!.date) : ""}</span>
        <span>{highest === 0 ? t("dashboard.noLogins") : t("dashboard.maxPerDay", { count: highest })}</span>
        <span>{days.length > 0 ? label(days.at(-1)!.date) : ""}</span>
      </p>
      <ul className="daily-chart-legend" aria-hidden="true">
        {SERIES.map((s) => (
          <li key={s.key}>
            <span className={`legend-swatch ${s.className}`} /> {t(`dashboard.method.${s.key}`)}
          </li>
        ))}
      </ul>
      <details className="daily-chart-table">
        <summary>{t("dashboard.showFigures")}</summary>
        <div className="table-wrap">
          <table className="list">
            <caption className="visually-hidden">{caption}</caption>
            <thead>
              <tr>
                <th scope="col">{t("dashboard.day")}</th>
                {SERIES.map((s) => (
                  <th scope="col" key={s.key}>{t(`dashboard.method.${s.key}`)}</th>
                ))}
                <th scope="col">{t("dashboard.total")}</th>
              </tr>
            </thead>
            <tbody>
              {days.map((day) => (
                <tr key={day.date}>
                  <th scope="row"><time dateTime={day.date}>{label(day.date)}</time></th>
                  {SERIES.map((s) => (
                    <td key={s.key}>{day.byMethod[s.key] ?? 0}</td>
                  ))}
                  <td>{day.total}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      </details>
    </figure>
  );
}
