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
    description:
      "Failed passwords that lock an account for clients without its device cookie, and that lock one device cookie when they come from that device.",
  },
  "auth.lockout.cooldownMinutes": {
    schema: SETTING_SCHEMAS["auth.lockout.cooldownMinutes"],
    default: 15,
    description: "How long a locked account (for clients without its device cookie) or a locked device cookie stays locked, in minutes.",
  },
  "auth.twoFactor.maxConsecutiveFailures": {
    schema: SETTING_SCHEMAS["auth.twoFactor.maxConsecutiveFailures"],
    default: 100,
    description:
      "Wrong codes in a row, across rate-limit windows, after which a user's authenticator app or email codes are refused until they sign in with a recovery code or a passkey, or an administrator clears the block (at most 100, NIST SP 800-63B).",
  },
  "rateLimits.passwordLogin.perAccount": {
    schema: SETTING_SCHEMAS["rateLimits.passwordLogin.perAccount"],
    default: { points: 10, windowMinutes: 15 },
    description: "Wrong passwords per email and organization from clients without the account's device cookie (a right password gives its point back).",
  },
  "rateLimits.passwordLogin.perIp": {
    schema: SETTING_SCHEMAS["rateLimits.passwordLogin.perIp"],
    default: { points: 100, windowMinutes: 15 },
    description: "Wrong passwords per client address (TRUST_PROXY decides which) from clients without the account's device cookie, whatever the account (a right password gives its point back).",
  },
  "rateLimits.magicLink.perAccount": {
    schema: SETTING_SCHEMAS["rateLimits.magicLink.perAccount"],
    default: { points: 5, windowMinutes: 15 },
    description: "Magic link requests per email and organization.",
  },
  "rateLimits.magicLink.perIp": {
    schema: SETTING_SCHEMAS["rateLimits.magicLink.perIp"],
    default: { points: 30, windowMinutes: 15 },
    description: "Magic link requests per client address, whatever the email.",
  },
  "rateLimits.passwordReset.perAccount": {
    schema: SETTING_SCHEMAS["rateLimits.passwordReset.perAccount"],
    default: { points: 5, windowMinutes: 60 },
    description: "Password reset requests per email.",
  },
  "rateLimits.passwordReset.perIp": {
    schema: SETTING_SCHEMAS["rateLimits.passwordReset.perIp"],
    default: { points: 30, windowMinutes: 60 },
    description: "Password reset requests per client address, whatever the email.",
  },
  "rateLimits.twoFactor.perUser": {
    schema: SETTING_SCHEMAS["rateLimits.twoFactor.perUser"],
    default: { points: 10, windowMinutes: 15 },
    description: "Wrong second-factor codes (TOTP, email code, recovery code, TOTP enrollment at sign-in) per user within the window (a right code gives its point back; auth.twoFactor.maxConsecutiveFailures counts across windows).",
  },
  "rateLimits.twoFactor.perIp": {
    schema: SETTING_SCHEMAS["rateLimits.twoFactor.perIp"],
    default: { points: 100, windowMinutes: 15 },
    description: "Wrong second-factor codes per client address, whatever the user (a right code gives its point back).",
  },
  "rateLimits.emailOtpResend.perUser": {
    schema: SETTING_SCHEMAS["rateLimits.emailOtpResend.perUser"],
    default: { points: 5, windowMinutes: 15 },
    description: "New email codes a user may ask for while signing in (each one is a mail).",
  },
  "rateLimits.passkeyLogin.perIp": {
    schema: SETTING_SCHEMAS["rateLimits.passkeyLogin.perIp"],
    default: { points: 100, windowMinutes: 15 },
    description: "Passkey sign-ins that fail, per client address (the account is only known from a valid passkey).",
  },
  "rateLimits.federatedLogin.perIp": {
    schema: SETTING_SCHEMAS["rateLimits.federatedLogin.perIp"],
    default: { points: 30, windowMinutes: 15 },
    description: "Sign-ins through another identity provider that fail (forged or replayed state, refused or unverifiable answers), per client address.",
  },
  "rateLimits.federatedLogin.perInteraction": {
    schema: SETTING_SCHEMAS["rateLimits.federatedLogin.perInteraction"],
    default: { points: 5, windowMinutes: 15 },
    description: "Sign-ins through another identity provider that fail within one sign-in (interaction).",
  },
  "rateLimits.deviceCodeEntry.perIp": {
    schema: SETTING_SCHEMAS["rateLimits.deviceCodeEntry.perIp"],
    default: { points: 20, windowMinutes: 15 },
    description: "Codes a browser may enter on the device sign-in page (RFC 8628), per client address.",
  },
  "rateLimits.clientRegistration.perIp": {
    schema: SETTING_SCHEMAS["rateLimits.clientRegistration.perIp"],
    default: { points: 20, windowMinutes: 60 },
    description: "Dynamic client registration requests (RFC 7591/7592) per client address and organization.",
  },
  "rateLimits.scim.perIp": {
    schema: SETTING_SCHEMAS["rateLimits.scim.perIp"],
    default: { points: 1200, windowMinutes: 1 },
    description: "Requests to an organization's SCIM endpoint per client address and organization, with or without a valid token.",
  },
  "rateLimits.scim.perToken": {
    schema: SETTING_SCHEMAS["rateLimits.scim.perToken"],
    default: { points: 600, windowMinutes: 1 },
    description: "Requests to an organization's SCIM endpoint per SCIM token.",
  },
  "rateLimits.ssf.perIp": {
    schema: SETTING_SCHEMAS["rateLimits.ssf.perIp"],
    default: { points: 600, windowMinutes: 1 },
    description: "Requests to an organization's Shared Signals endpoints (stream management, poll) per client address and organization, with or without a valid token.",
  },
  "rateLimits.ssf.perClient": {
    schema: SETTING_SCHEMAS["rateLimits.ssf.perClient"],
    default: { points: 300, windowMinutes: 1 },
    description: "Requests to an organization's Shared Signals endpoints per receiver (client).",
  },
  "tokens.accessTokenTtlSeconds": {
    schema: SETTING_SCHEMAS["tokens.accessTokenTtlSeconds"],
    default: 3600,
    description: "Lifetime of access tokens, in seconds (applies to tokens issued after the change).",
  },
  "webhooks.disableAfterFailures": {
    schema: SETTING_SCHEMAS["webhooks.disableAfterFailures"],
    default: 20,
    description: "Failed webhook attempts in a row after which Porta turns the endpoint off (and records webhook.disabled).",
  },
} as const;

export type { SettingKey };
export type SettingValue<K extends SettingKey> = z.output<(typeof SETTINGS)[K]["schema"]>;

export const SETTING_KEYS = Object.keys(SETTINGS) as SettingKey[];

export { isSettingKey } from "~/schemas/settings";
