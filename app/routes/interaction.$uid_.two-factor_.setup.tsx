import { data, redirect, type ActionFunctionArgs, type LoaderFunctionArgs } from "@remix-run/node";
import { Form, useActionData, useLoaderData } from "@remix-run/react";
import QRCode from "qrcode";
import { useTranslation } from "react-i18next";
import { AuthCard, Field } from "~/components/auth-card";
import { GateRefusalPage } from "~/components/gate-refusal";
import { clearPending, loadPending, savePending } from "~/.server/auth/two-factor/pending";
import { beginTotpEnrollment, confirmTotpEnrollment } from "~/.server/auth/two-factor/service";
import { totpUri } from "~/.server/auth/two-factor/totp";
import { getUserById } from "~/.server/directory/users";
import { interactionHeaders, loadInteractionPage, NO_STORE, requestMeta } from "~/.server/interaction/request";
import { recordLoginSuccess } from "~/.server/auth/login-success";
import { recordLogin } from "~/.server/oidc/interaction-results";
import { readForm } from "~/.server/http/form";

// Without it Remix drops the loader's and action's headers (no-store, Retry-After) from the page.
export const headers = interactionHeaders;

/** TOTP enrollment during a login that requires it: QR code and key, a code to confirm, then the recovery codes once. */
export async function loader({ request, params, context }: LoaderFunctionArgs) {
  const uid = params.uid!;
  const { services } = context;
  const loaded = await loadInteractionPage(request, context, uid);
  if (!loaded.ok) return data({ view: "expired" as const, language: loaded.language }, { status: 400, headers: NO_STORE });
  const pending = await loadPending(services.store, uid);
  if (!pending || !pending.plan.enrollTotp) return redirect(`/interaction/${uid}`, { headers: NO_STORE });
  // Also reached right after a successful confirmation (Remix reloads after an action).
  if (pending.enrolled) return data({ view: "enrolled" as const, ...loaded.frame }, { headers: NO_STORE });
  const user = await getUserById(services.db.prisma, services.cache, pending.userId);
  const secret = await beginTotpEnrollment(services, pending.userId);
  const uri = totpUri(secret, loaded.frame.branding.name, user?.email ?? pending.userId);
  return data(
    {
      view: "setup" as const,
      ...loaded.frame,
      secret: secret.replace(/(.{4})/g, "$1 ").trim(),
      qr: await QRCode.toDataURL(uri, { margin: 1, width: 220 }),
    },
    { headers: NO_STORE },
  );
}

export async function action({ request, params, context }: ActionFunctionArgs) {
  const uid = params.uid!;
  const { services } = context;
  const loaded = await loadInteractionPage(request, context, uid);
  if (!loaded.ok) return data({ view: "expired" as const, language: loaded.language }, { status: 400, headers: NO_STORE });
  const form = await readForm(request);
  if (!services.csrf.verify(uid, form.get("csrf"))) return data({ view: "csrf" as const, ...loaded.frame }, { status: 403, headers: NO_STORE });
  const pending = await loadPending(services.store, uid);
  if (!pending || !pending.plan.enrollTotp) return redirect(`/interaction/${uid}`, { headers: NO_STORE });

  if (form.get("intent") === "continue" && pending.enrolled) {
    await clearPending(services.store, uid);
    const to = await recordLogin(loaded.context.interaction, { accountId: pending.userId, amr: ["pwd", "otp", "mfa"] });
    const meta = requestMeta(context, "POST /interaction/:uid/two-factor/setup");
    await recordLoginSuccess(
      { prisma: services.db.prisma, audit: services.audit },
      { organizationId: pending.organizationId, userId: pending.userId, clientId: loaded.context.client.id, method: "password", secondFactor: "totp", ip: meta.ip, requestId: meta.requestId },
    );
    return redirect(to, { headers: NO_STORE });
  }
  const limit = await services.limits.consume("twoFactor", pending.userId);
  if (!limit.allowed) return data({ view: "setup-failed" as const, ...loaded.frame }, { status: 429, headers: { ...NO_STORE, "Retry-After": String(limit.retryAfterSeconds) } });
  const codes = await confirmTotpEnrollment(services, pending.userId, String(form.get("code") ?? "").slice(0, 16));
  if (!codes) return data({ view: "setup-failed" as const, ...loaded.frame }, { status: 401, headers: NO_STORE });
  await savePending(services.store, uid, { ...pending, enrolled: true });
  await services.audit.record({
    eventType: "auth.2fa.enrolled",
    organizationId: pending.organizationId,
    actorType: "user",
    actorId: pending.userId,
    targetType: "user",
    targetId: pending.userId,
    data: { method: "totp" },
  });
  return data({ view: "codes" as const, ...loaded.frame, codes }, { headers: NO_STORE });
}

export default function TotpSetup() {
  const page = useLoaderData<typeof loader>();
  const result = useActionData<typeof action>();
  const { t } = useTranslation();
  if (page.view === "expired") return <GateRefusalPage refusal={page} />;
  if (result && (result.view === "expired" || result.view === "csrf")) return <GateRefusalPage refusal={result} />;
  if (result?.view === "codes" || page.view === "enrolled") {
    const codes = result?.view === "codes" ? result.codes : [];
    return (
      <AuthCard branding={page.branding} title={t("twoFactor.codesTitle")}>
        {codes.length > 0 ? (
          <>
            <p>{t("twoFactor.codesIntro")}</p>
            <ul className="recovery-codes" aria-label={t("twoFactor.codesTitle")}>
              {codes.map((code) => (
                <li key={code}>
                  <code>{code}</code>
                </li>
              ))}
            </ul>
          </>
        ) : null}
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
      <p className="qr">
        <img src={page.qr} alt={t("twoFactor.qrAlt")} width={220} height={220} />
      </p>
      <p>
        {t("twoFactor.manualSecret")} <code data-testid="totp-secret">{page.secret}</code>
      </p>
      <Form method="post" reloadDocument noValidate>
        <input type="hidden" name="csrf" value={page.csrf} />
        <input type="hidden" name="intent" value="confirm" />
        <Field name="code" label={t("twoFactor.code")} autoComplete="one-time-code" autoFocus error={result?.view === "setup-failed" ? t("twoFactor.setupFailed") : undefined} />
        <button className="button" type="submit">
          {t("twoFactor.verify")}
        </button>
      </Form>
    </AuthCard>
  );
}
