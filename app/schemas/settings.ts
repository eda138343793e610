import { z } from "zod";

/**
 * A rate-limit rule: how many attempts one key (an account, an address) may make within a
 * window that starts at its first attempt.
 */
export const LimitRuleSchema = z
  .object({
    points: z.number().int().min(1).max(100_000),
    windowMinutes: z.number().int().min(1).max(1440),
  })
  .strict();

/**
 * The type and bounds of every system configuration value: the Admin API validates writes with
 * these, and the console checks a value with the same schema before it is sent.
 */
export const SETTING_SCHEMAS = {
  "auth.passwordMinLength": z.number().int().min(8).max(128),
  "auth.magicLinkTtlMinutes": z.number().int().min(1).max(1440),
  "auth.emailOtpTtlMinutes": z.number().int().min(1).max(60),
  "auth.passwordResetTtlMinutes": z.number().int().min(5).max(1440),
  "auth.lockout.maxFailures": z.number().int().min(1).max(100),
  "auth.lockout.cooldownMinutes": z.number().int().min(1).max(1440),
  /** NIST SP 800-63B §5.2.2: no more than 100 consecutive failed attempts on one authenticator. */
  "auth.twoFactor.maxConsecutiveFailures": z.number().int().min(1).max(100),
  "webhooks.disableAfterFailures": z.number().int().min(1).max(1000),
  "rateLimits.passwordLogin.perAccount": LimitRuleSchema,
  "rateLimits.passwordLogin.perIp": LimitRuleSchema,
  "rateLimits.magicLink.perAccount": LimitRuleSchema,
  "rateLimits.magicLink.perIp": LimitRuleSchema,
  "rateLimits.passwordReset.perAccount": LimitRuleSchema,
  "rateLimits.passwordReset.perIp": LimitRuleSchema,
  "rateLimits.twoFactor.perUser": LimitRuleSchema,
  "rateLimits.twoFactor.perIp": LimitRuleSchema,
  "rateLimits.emailOtpResend.perUser": LimitRuleSchema,
  "rateLimits.passkeyLogin.perIp": LimitRuleSchema,
  "rateLimits.federatedLogin.perIp": LimitRuleSchema,
  "rateLimits.federatedLogin.perInteraction": LimitRuleSchema,
  "rateLimits.deviceCodeEntry.perIp": LimitRuleSchema,
  "rateLimits.clientRegistration.perIp": LimitRuleSchema,
  "rateLimits.scim.perIp": LimitRuleSchema,
  "rateLimits.scim.perToken": LimitRuleSchema,
  "rateLimits.ssf.perIp": LimitRuleSchema,
  "rateLimits.ssf.perClient": LimitRuleSchema,
  "tokens.accessTokenTtlSeconds": z.number().int().min(60).max(86_400),
} as const;

export type SettingKey = keyof typeof SETTING_SCHEMAS;

export function isSettingKey(key: string): key is SettingKey {
  return Object.hasOwn(SETTING_SCHEMAS, key);
}

/** A value as a person types it: JSON when it parses (numbers, booleans, lists), else the text itself. */
export function typedValue(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}
