import { randomBytes, timingSafeEqual } from "node:crypto";
import { cookieHeader, readCookie } from "../http/cookies";
import type { Context } from "../context";

/**
 * Device cookies (OWASP "Slow Down Online Guessing Attacks with Device Cookies", decision 026).
 * After a right password the browser gets `<userId>.<nonce>.<signature>`: the signature is an
 * HMAC under a key derived from ENCRYPTION_KEY over the organization, the user and the nonce, so
 * a cookie is good for one account of one organization only and cannot be made or altered
 * without the key. Nothing about the password is in it, and nothing about it is stored: the nonce
 * names the device's own failure counter. One cookie per organization (the browser's most recent
 * account there), sent only to the interaction pages.
 */
const PATH = "/interaction";
const MAX_AGE_SECONDS = 180 * 24 * 60 * 60;
const NONCE = /^[A-Za-z0-9_-]{22}$/;

export const deviceCookieName = (organizationId: string) => `porta_device_${organizationId}`;

const sign = (ctx: Context<"tokens">, organizationId: string, userId: string, nonce: string) =>
  ctx.tokens.derive("device-cookie", `${organizationId}:${userId}:${nonce}`);

/** The Set-Cookie header of a fresh device cookie (a new nonce each time: a new device budget). */
export function issueDeviceCookie(ctx: Context<"tokens" | "config">, organizationId: string, userId: string): string {
  const nonce = randomBytes(16).toString("base64url");
  const value = `${userId}.${nonce}.${sign(ctx, organizationId, userId, nonce)}`;
  return cookieHeader(ctx.config.baseUrl, deviceCookieName(organizationId), value, { path: PATH, maxAge: MAX_AGE_SECONDS });
}

/** The request's device cookie for the organization, unverified (verified per account by `trustedDevice`). */
export const deviceCookieOf = (request: Request, organizationId: string) => readCookie(request, deviceCookieName(organizationId));

/**
 * The device's id when `cookie` is a valid device cookie of this user in this organization;
 * null for anything else (no cookie, another user or organization, a tampered one).
 */
export function trustedDevice(ctx: Context<"tokens">, organizationId: string, userId: string, cookie: string | undefined): string | null {
  const [cookieUser, nonce, signature, ...rest] = (cookie ?? "").split(".");
  if (rest.length > 0 || cookieUser !== userId || !nonce || !NONCE.test(nonce) || !signature) return null;
  const expected = Buffer.from(sign(ctx, organizationId, userId, nonce));
  const given = Buffer.from(signature);
  return given.length === expected.length && timingSafeEqual(given, expected) ? nonce : null;
}
