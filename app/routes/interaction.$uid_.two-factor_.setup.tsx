import { data, redirect, type ActionFunctionArgs, type LoaderFunctionArgs } from "@remix-run/node";
import { Form, useActionData, useLoaderData } from "@remix-run/react";
import { useTranslation } from "react-i18next";
import { RecoveryCodes } from "~/components/recovery-codes";
import { AuthCard } from "~/components/auth-card";
import { TotpSetupForm } from "~/components/totp-setup";
import { GateRefusalPage, isGateRefusal } from "~/components/gate-refusal";
import { beginTotpEnrollment, enrollTotp } from "~/.server/auth/two-factor/service";
import { loadSecondFactorStep, signInAfterEnrollment, totpEnrolledAtStep } from "~/.server/sign-in/flow";
import { totpQrDataUrl, totpUri } from "~/.server/auth/two-factor/totp";
import { getUserById } from "~/.server/directory/users";
import { passGate } from "~/.server/sign-in/door";
import { interactionHeaders, NO_STORE } from "~/.server/sign-in/page";

// Without it Remix drops the loader's and action's headers (no-store, Retry-After) from the page.
export const headers = interactionHeaders;

/** TOTP enrollment during a login that requires it: QR code and key, a code to confirm, then the recovery codes once. */
export async function loader(args: LoaderFunctionArgs) {
  const { services } = args.context;
  const gate = await passGate(args);
  if (!gate.open) return gate.response;
  const pending = await loadSecondFactorStep(gate.ctx, gate.context);
  if (!pending || !pending.plan.enrollTotp) return redirect(`/interaction/${gate.uid}`, { headers: NO_STORE });
  // Also reached right after a successful confirmation (Remix reloads after an action).
  if (pending.enrolled) return data({ view: "enrolled" as const, ...gate.frame, accountPath: `/${gate.context.organization.slug}/account` }, { headers: NO_STORE });
  const user = await getUserById(services.db.prisma, services.cache, pending.userId);
  const secret = await beginTotpEnrollment(gate.ctx, pending.userId);
  const uri = totpUri(secret, gate.frame.branding.name, user?.email ?? pending.userId);
  return data(
    {
      view: "setup" as const,
      ...gate.frame,
      secret: secret.replace(/(.{4})/g, "$1 ").trim(),
      qr: await totpQrDataUrl(uri),
    },
    { headers: NO_STORE },
  );
}

export async function action(args: ActionFunctionArgs) {
  const gate = await passGate(args);
  if (!gate.open) return gate.response;
  const pending = await loadSecondFactorStep(gate.ctx, gate.context);
  if (!pending || !pending.plan.enrollTotp) return redirect(`/interaction/${gate.uid}`, { headers: NO_STORE });

  if (gate.form.get("intent") === "continue" && pending.enrolled) {
    const to = await signInAfterEnrollment(gate.ctx, gate.context, pending, gate.meta);
    return redirect(to ?? `/interaction/${gate.uid}`, { headers: NO_STORE });
  }
  // Enrollment is the account's (auth/two-factor/service.ts); the step only remembers it happened.
  const enrolled = await enrollTotp(gate.ctx, { userId: pending.userId, organizationId: pending.organizationId, code: String(gate.form.get("code") ?? "").slice(0, 16), meta: gate.meta });
  if (enrolled.ok) await totpEnrolledAtStep(gate.ctx, gate.context, pending);
  if (!enrolled.ok && enrolled.reason === "rate_limited") {
    return data({ view: "setup-failed" as const, ...gate.frame }, { status: 429, headers: { ...NO_STORE, "Retry-After": String(enrolled.retryAfterSeconds) } });
  }
  if (!enrolled.ok) return data({ view: "setup-failed" as const, ...gate.frame }, { status: 401, headers: NO_STORE });
  return data({ view: "codes" as const, ...gate.frame, codes: enrolled.recoveryCodes, accountPath: `/${gate.context.organization.slug}/account` }, { headers: NO_STORE });
}

export default function TotpSetup() {
  const page = useLoaderData<typeof loader>();
  const result = useActionData<typeof action>();
  const { t } = useTranslation();
  if (isGateRefusal(page)) return <GateRefusalPage refusal={page} />;
  if (result && isGateRefusal(result)) return <GateRefusalPage refusal={result} />;
  if (result?.view === "codes" || page.view === "enrolled") {
    const codes = result?.view === "codes" ? result.codes : [];
    return (
      <AuthCard branding={page.branding} title={t("twoFactor.codesTitle")}>
        {codes.length > 0 ? (
          <>
            <p>{t("twoFactor.codesIntro")}</p>
            <RecoveryCodes codes={codes} organizationName={page.branding.name} />
          </>
        ) : null}
        <p className="muted">
          {t("account.manageLater")} <a target="_blank" rel="noopener" href={result?.view === "codes" ? result.accountPath : page.view === "enrolled" ? page.accountPath : undefined}>{t("account.manageLaterLink")}</a>.
        </p>
        <Form method="post" reloadDocument>
          <input type="hidden" name="csrf" value={page.csrf} />
          <input type="hidden" name="intent" value="continue" />
          <button className="button" type="submit">
            {t("twoFactor.continue")}
          </button>
        </Form>
      </AuthCard>
    );
  }
  return (
    <AuthCard branding={page.branding} title={t("twoFactor.setupTitle")}>
      <p>{t("twoFactor.setupIntro", { organization: page.branding.name })}</p>
      <TotpSetupForm qr={page.qr} secret={page.secret} csrf={page.csrf} intent="confirm" error={result?.view === "setup-failed" ? t("twoFactor.setupFailed") : undefined} />
    </AuthCard>
  );
}
