import type { z } from "zod";
import { SETTING_SCHEMAS, type SettingKey } from "~/schemas/settings";

/**
 * Every system configuration entry Porta knows, with its type and bounds (shared with the
 * console: app/schemas/settings.ts) and its default. The Admin API validates writes against
 * these; readers get the stored value or the default, within seconds of a change and without
 * a restart. The defaults live here and nowhere else: features read the setting (or, where no
 * store is at hand, `SETTINGS[key].default`), so this module imports no feature.
 */
export const SETTINGS = {
  "auth.passwordMinLength": {
    schema: SETTING_SCHEMAS["auth.passwordMinLength"],
    default: 8,
    description: "Minimum length of new passwords (NIST SP 800-63B: at least 8).",
  },
  "auth.magicLinkTtlMinutes": {
    schema: SETTING_SCHEMAS["auth.magicLinkTtlMinutes"],
    default: 15,
    description: "Lifetime of magic links, in minutes.",
  },
  "auth.emailOtpTtlMinutes": {
    schema: SETTING_SCHEMAS["auth.emailOtpTtlMinutes"],
    default: 10,
    description: "Lifetime of emailed one-time codes, in minutes.",
  },
  "auth.passwordResetTtlMinutes": {
    schema: SETTING_SCHEMAS["auth.passwordResetTtlMinutes"],
    default: 60,
    description: "Lifetime of password reset links, in minutes.",
  },
  "auth.lockout.maxFailures": {
    schema: SETTING_SCHEMAS["auth.lockout.maxFailures"],
    default: 5,
    description: "Consecutive failed passwords that lock an account.",
  },
  "auth.lockout.cooldownMinutes": {
    schema: SETTING_SCHEMAS["auth.lockout.cooldownMinutes"],
    default: 15,
    description: "How long a locked account stays locked, in minutes.",
  },
  "tokens.accessTokenTtlSeconds": {
    schema: SETTING_SCHEMAS["tokens.accessTokenTtlSeconds"],
    default: 3600,
    description: "Lifetime of access tokens, in seconds (applies to tokens issued after the change).",
  },
} as const;

export type { SettingKey };
export type SettingValue<K extends SettingKey> = z.output<(typeof SETTINGS)[K]["schema"]>;

export const SETTING_KEYS = Object.keys(SETTINGS) as SettingKey[];

export { isSettingKey } from "~/schemas/settings";
