import { cookieHeader, readCookie } from "../http/cookies";

/**
 * The browser's mark of an IdP-initiated SAML sign-in waiting for its application (decision
 * 083): `<clientId>.<key>`, where the key names the verified person in the ephemeral store. The
 * ACS sets it and sends the browser to the application's own sign-in start; the application's
 * authorization request then always shows Porta's sign-in (even over a session of someone else,
 * the provider's login check reads the client part), and the login page hands the key to the
 * interaction. Five minutes, like the verified person it names; any path, because the
 * authorization endpoint is under the organization's prefix and the pages under /interaction.
 */
export const IDP_INITIATED_COOKIE = "porta_saml_idp";
export const IDP_INITIATED_TTL_SECONDS = 5 * 60;

const KEY = /^[A-Za-z0-9_-]{43}$/;

export interface IdpInitiatedMark {
  clientId: string;
  key: string;
}

/** The mark in a cookie value; null for anything that is not one. */
export function parseIdpInitiatedMark(value: string | undefined): IdpInitiatedMark | null {
  if (!value || value.length > 300) return null;
  const dot = value.lastIndexOf(".");
  if (dot <= 0) return null;
  const key = value.slice(dot + 1);
  if (!KEY.test(key)) return null;
  try {
    return { clientId: decodeURIComponent(value.slice(0, dot)), key };
  } catch {
    return null;
  }
}

export const idpInitiatedMarkOf = (request: Request) => parseIdpInitiatedMark(readCookie(request, IDP_INITIATED_COOKIE));

export const setIdpInitiatedMark = (baseUrl: string, mark: IdpInitiatedMark) =>
  cookieHeader(baseUrl, IDP_INITIATED_COOKIE, `${encodeURIComponent(mark.clientId)}.${mark.key}`, { path: "/", maxAge: IDP_INITIATED_TTL_SECONDS });

export const clearIdpInitiatedMark = (baseUrl: string) => cookieHeader(baseUrl, IDP_INITIATED_COOKIE, "", { path: "/", maxAge: 0 });
