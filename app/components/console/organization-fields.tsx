import { useTranslation } from "react-i18next";
import { LOGIN_METHODS } from "~/schemas/login-methods";
import { TWO_FACTOR_POLICIES } from "~/schemas/two-factor-policy";
import { CheckboxGroup, SelectField } from "./ui";

/** Login methods, 2FA policy and language: the organization settings shared by create and edit. */
export function OrganizationFields({ values, errors }: { values: { defaultLoginMethods: readonly string[]; twoFactorPolicy: string; defaultLocale: string; oauth21: boolean }; errors: Record<string, string> }) {
  const { t } = useTranslation("console");
  return (
    <>
      <CheckboxGroup
        name="defaultLoginMethods"
        legend={t("orgs.loginMethods")}
        options={LOGIN_METHODS.map((m) => ({ value: m, label: t(`orgs.method.${m}`) }))}
        checked={values.defaultLoginMethods}
        error={errors.defaultLoginMethods}
      />
      <SelectField
        name="twoFactorPolicy"
        label={t("orgs.twoFactor")}
        options={TWO_FACTOR_POLICIES.map((p) => ({ value: p, label: t(`orgs.policy.${p}`) }))}
        defaultValue={values.twoFactorPolicy}
        error={errors.twoFactorPolicy}
      />
      <SelectField
        name="defaultLocale"
        label={t("orgs.locale")}
        options={[
          { value: "en", label: "English" },
          { value: "de", label: "Deutsch" },
        ]}
        defaultValue={values.defaultLocale}
        error={errors.defaultLocale}
      />
      <CheckboxGroup name="oauth21" legend={t("orgs.protocol")} options={[{ value: "on", label: t("orgs.oauth21") }]} checked={values.oauth21 ? ["on"] : []} error={errors.oauth21} />
    </>
  );
}
