import type { MetaFunction } from "@remix-run/node";
import { useTranslation } from "react-i18next";
import { consoleHeaders } from "~/.server/console/page";

export const headers = consoleHeaders;
export const meta: MetaFunction = () => [{ title: "Porta" }];

/** Where a sign-in to an organization's console ends that the door refused (no role, no second factor). */
export default function Refused() {
  const { t } = useTranslation("console");
  return (
    <main className="page">
      <h1>{t("organizationConsole.refusedTitle")}</h1>
      <p>{t("organizationConsole.refused")}</p>
    </main>
  );
}
