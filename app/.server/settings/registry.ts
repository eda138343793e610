import type { z } from "zod";
import { SETTING_SCHEMAS, type SettingKey } from "~/schemas/settings";
import { MAGIC_LINK_TTL_MINUTES, PASSWORD_RESET_TTL_MINUTES } from "../auth/email-links";
import { DEFAULT_LOCKOUT } from "../auth/password-login";
import { DEFAULT_MIN_PASSWORD_LENGTH } from "../auth/password-reset";
import { EMAIL_OTP_TTL_MINUTES } from "../auth/two-factor/email-otp";
import { LIFETIMES } from "../oidc/lifetimes";

/**
 * Every system configuration entry Porta knows, with its type and bounds (shared with the
 * console: app/schemas/settings.ts) and its default. The Admin API validates writes against
 * these; readers get the stored value or the default, within seconds of a change and without
 * a restart.
 */
export const SETTINGS = {
  "auth.passwordMinLength": {
    schema: SETTING_SCHEMAS["auth.passwordMinLength"],
    default: DEFAULT_MIN_PASSWORD_LENGTH,
    description: "Minimum length of new passwords (NIST SP 800-63B: at least 8).",
  },
  "auth.magicLinkTtlMinutes": {
    schema: SETTING_SCHEMAS["auth.magicLinkTtlMinutes"],
    default: MAGIC_LINK_TTL_MINUTES,
    description: "Lifetime of magic links, in minutes.",
  },
  "auth.emailOtpTtlMinutes": {
    schema: SETTING_SCHEMAS["auth.emailOtpTtlMinutes"],
    default: EMAIL_OTP_TTL_MINUTES,
    description: "Lifetime of emailed one-time codes, in minutes.",
  },
  "auth.passwordResetTtlMinutes": {
    schema: SETTING_SCHEMAS["auth.passwordResetTtlMinutes"],
    default: PASSWORD_RESET_TTL_MINUTES,
    description: "Lifetime of password reset links, in minutes.",
  },
  "auth.lockout.maxFailures": {
    schema: SETTING_SCHEMAS["auth.lockout.maxFailures"],
    default: DEFAULT_LOCKOUT.maxFailures,
    description: "Consecutive failed passwords that lock an account.",
  },
  "auth.lockout.cooldownMinutes": {
    schema: SETTING_SCHEMAS["auth.lockout.cooldownMinutes"],
    default: DEFAULT_LOCKOUT.cooldownSeconds / 60,
    description: "How long a locked account stays locked, in minutes.",
  },
  "tokens.accessTokenTtlSeconds": {
    schema: SETTING_SCHEMAS["tokens.accessTokenTtlSeconds"],
    default: LIFETIMES.AccessToken,
    description: "Lifetime of access tokens, in seconds (applies to tokens issued after the change).",
  },
} as const;

export type { SettingKey };
export type SettingValue<K extends SettingKey> = z.output<(typeof SETTINGS)[K]["schema"]>;

export const SETTING_KEYS = Object.keys(SETTINGS) as SettingKey[];

export { isSettingKey } from "~/schemas/settings";
