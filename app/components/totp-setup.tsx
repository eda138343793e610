import { Form } from "@remix-run/react";
import { useTranslation } from "react-i18next";
import { Field } from "./auth-card";

/** Adding an authenticator app, at a sign-in that requires it or on the account page: QR code, manual key, first code. */
export function TotpSetupForm({ qr, secret, csrf, error, intent }: { qr: string; secret: string; csrf: string; error: string | undefined; intent?: string }) {
  const { t } = useTranslation();
  return (
    <>
      <p className="qr">
        <img src={qr} alt={t("twoFactor.qrAlt")} width={220} height={220} />
      </p>
      <p>
        {t("twoFactor.manualSecret")} <code data-testid="totp-secret">{secret}</code>
      </p>
      <Form method="post" reloadDocument noValidate>
        <input type="hidden" name="csrf" value={csrf} />
        {intent ? <input type="hidden" name="intent" value={intent} /> : null}
        <Field name="code" label={t("twoFactor.code")} autoComplete="one-time-code" inputMode="numeric" autoFocus error={error} />
        <button className="button" type="submit">
          {t("twoFactor.verify")}
        </button>
      </Form>
    </>
  );
}
