/** An organization's second-factor policies, defined once (Admin API, console, import, sign-in). */
export const TWO_FACTOR_POLICIES = ["optional", "required_email", "required_totp", "required_passkey", "required_any"] as const;
export type TwoFactorPolicy = (typeof TWO_FACTOR_POLICIES)[number];
