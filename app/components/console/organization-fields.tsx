import { useTranslation } from "react-i18next";
import { LOGIN_METHODS } from "~/schemas/login-methods";
import { TWO_FACTOR_POLICIES } from "~/schemas/two-factor-policy";
import { BOT_CHALLENGE_COST, BOT_CHALLENGE_POLICIES } from "~/schemas/bot-challenge";
import { CheckboxGroup, SelectField, TextField } from "./ui";

/** Login methods, 2FA policy, language and bot protection: the organization settings shared by create and edit. */
export function OrganizationFields({
  values,
  errors,
}: {
  values: { defaultLoginMethods: readonly string[]; twoFactorPolicy: string; defaultLocale: string; oauth21: boolean; botChallenge: string; botChallengeCost: number | string };
  errors: Record<string, string>;
}) {
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
      <SelectField
        name="botChallenge"
        label={t("orgs.botChallenge")}
        options={BOT_CHALLENGE_POLICIES.map((p) => ({ value: p, label: t(`orgs.botChallengePolicy.${p}`) }))}
        defaultValue={values.botChallenge}
        hint={t("orgs.botChallengeHint")}
        error={errors.botChallenge}
      />
      <TextField
        name="botChallengeCost"
        label={t("orgs.botChallengeCost")}
        defaultValue={String(values.botChallengeCost)}
        hint={t("orgs.botChallengeCostHint", { min: BOT_CHALLENGE_COST.min, max: BOT_CHALLENGE_COST.max })}
        error={errors.botChallengeCost}
      />
    </>
  );
}
