import { SETTINGS } from "../../settings/registry";

/** Token and artifact lifetimes in seconds; the access token's is a setting (its default here). */
export const LIFETIMES = {
  AccessToken: SETTINGS["tokens.accessTokenTtlSeconds"].default,
  ClientCredentials: SETTINGS["tokens.accessTokenTtlSeconds"].default,
  IdToken: 3600,
  AuthorizationCode: 60,
  RefreshToken: 14 * 24 * 3600,
  Grant: 14 * 24 * 3600,
  Session: 14 * 24 * 3600,
  Interaction: 3600,
  PushedAuthorizationRequest: 60,
  /** RFC 8628 §3.2 expires_in: ten minutes to find another device and enter the code. */
  DeviceCode: 600,
} as const;

/** What a signing key must outlive after it stops signing. */
export const MAX_SIGNED_TOKEN_LIFETIME = Math.max(LIFETIMES.AccessToken, LIFETIMES.ClientCredentials, LIFETIMES.IdToken);
