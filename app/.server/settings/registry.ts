import { z } from "zod";
import { MAGIC_LINK_TTL_MINUTES, PASSWORD_RESET_TTL_MINUTES } from "../auth/email-links";
import { DEFAULT_LOCKOUT } from "../auth/password-login";
import { DEFAULT_MIN_PASSWORD_LENGTH } from "../auth/password-reset";
import { EMAIL_OTP_TTL_MINUTES } from "../auth/two-factor/email-otp";
import { LIFETIMES } from "../oidc/lifetimes";

/**
 * Every system configuration entry Porta knows, with its type, bounds and default. The Admin
 * API validates writes against these; readers get the stored value or the default, within
 * seconds of a change and without a restart.
 */
export const SETTINGS = {
  "auth.passwordMinLength": {
    schema: z.number().int().min(8).max(128),
    default: DEFAULT_MIN_PASSWORD_LENGTH,
    description: "Minimum length of new passwords (NIST SP 800-63B: at least 8).",
  },
  "auth.magicLinkTtlMinutes": {
    schema: z.number().int().min(1).max(1440),
    default: MAGIC_LINK_TTL_MINUTES,
    description: "Lifetime of magic links, in minutes.",
  },
  "auth.emailOtpTtlMinutes": {
    schema: z.number().int().min(1).max(60),
    default: EMAIL_OTP_TTL_MINUTES,
    description: "Lifetime of emailed one-time codes, in minutes.",
  },
  "auth.passwordResetTtlMinutes": {
    schema: z.number().int().min(5).max(1440),
    default: PASSWORD_RESET_TTL_MINUTES,
    description: "Lifetime of password reset links, in minutes.",
  },
  "auth.lockout.maxFailures": {
    schema: z.number().int().min(1).max(100),
    default: DEFAULT_LOCKOUT.maxFailures,
    description: "Consecutive failed passwords that lock an account.",
  },
  "auth.lockout.cooldownMinutes": {
    schema: z.number().int().min(1).max(1440),
    default: DEFAULT_LOCKOUT.cooldownSeconds / 60,
    description: "How long a locked account stays locked, in minutes.",
  },
  "tokens.accessTokenTtlSeconds": {
    schema: z.number().int().min(60).max(86_400),
    default: LIFETIMES.AccessToken,
    description: "Lifetime of access tokens, in seconds (applies to tokens issued after the change).",
  },
} as const;

export type SettingKey = keyof typeof SETTINGS;
export type SettingValue<K extends SettingKey> = z.output<(typeof SETTINGS)[K]["schema"]>;

export const SETTING_KEYS = Object.keys(SETTINGS) as SettingKey[];

export function isSettingKey(key: string): key is SettingKey {
  return key in SETTINGS;
}
