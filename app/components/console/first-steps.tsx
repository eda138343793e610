import { Link } from "@remix-run/react";
import { useTranslation } from "react-i18next";
import type { FirstSteps } from "~/schemas/stats";

const STEPS = ["organization", "application", "client", "user", "signIn"] as const;

function hrefOf(step: (typeof STEPS)[number], organizationId: string | null): string {
  if (step === "organization" || !organizationId) return "/console/organizations/new";
  const base = `/console/organizations/${organizationId}`;
  if (step === "application") return `${base}/applications`;
  if (step === "user") return `${base}/users`;
  return `${base}/clients`;
}

/**
 * The dashboard's checklist to a first app (organization → application → client → user → a
 * sign-in), shown until someone has signed in to an organization of the operator's own; each
 * open step links to the page where it is done.
 */
export function FirstStepsPanel({ steps }: { steps: FirstSteps }) {
  const { t } = useTranslation("console");
  const done = { organization: steps.organizationId !== null, application: steps.application, client: steps.client, user: steps.user, signIn: steps.signIn };
  if (STEPS.every((step) => done[step])) return null;
  return (
    <section className="panel panel-wide" aria-labelledby="first-steps-title">
      <h2 id="first-steps-title">{t("firstSteps.title")}</h2>
      <p className="muted">{t("firstSteps.text")}</p>
      <ol className="checklist">
        {STEPS.map((step) => (
          <li key={step} data-done={done[step] ? "true" : "false"}>
            {done[step] ? (
              <>
                <span aria-hidden="true">✓ </span>
                {t(`firstSteps.${step}`)} <span className="muted">({t("firstSteps.done")})</span>
              </>
            ) : (
              <>
                <Link to={hrefOf(step, steps.organizationId)}>{t(`firstSteps.${step}`)}</Link> <span className="muted">{t(`firstSteps.${step}Hint`)}</span>
              </>
            )}
          </li>
        ))}
      </ol>
    </section>
  );
}
