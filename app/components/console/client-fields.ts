import { list, text } from "./forms";

/** The client edit form as the Admin API's update body, in the browser and on the server alike. */
export const CLIENT_FIELDS = [
  "name",
  "redirectUris",
  "postLogoutRedirectUris",
  "allowedCorsOrigins",
  "tokenExchangeAudiences",
  "scope",
  "grantTypes",
  "applicationId",
  "skipConsent",
  "pkce",
  "accessTokenTtlSeconds",
  "refreshTokenTtlSeconds",
  "adminApiAccess",
  "backchannelLogoutUri",
  "backchannelLogoutSessionRequired",
  "initiateLoginUri",
  "jwks",
  "jwksUri",
] as const;

/** Marks a form that shows the Admin API checkbox (only for the super-admin organization's clients). */
export const ADMIN_API_ACCESS_SHOWN = "adminApiAccessShown";
/** Marks a form that shows the skip-consent checkbox (web clients only). */
export const SKIP_CONSENT_SHOWN = "skipConsentShown";
/** Marks a form that shows the back-channel fields (an unticked checkbox sends nothing). */
export const BACKCHANNEL_SHOWN = "backchannelShown";
/** Marks a form that shows the client's keys (decision 045). */
export const KEYS_SHOWN = "keysShown";

/** The key set as typed: empty is none; what does not parse goes to the schema as text, so it names the problem. */
function keySet(value: string | undefined): unknown {
  const trimmed = (value ?? "").trim();
  if (trimmed === "") return null;
  try {
    return JSON.parse(trimmed) as unknown;
  } catch {
    return trimmed;
  }
}

const lines = (value: string | undefined) => (value ?? "").split(/\r?\n/).map((l) => l.trim()).filter(Boolean);

/** A lifetime field: empty is the default (null); anything but digits goes to the schema as typed, so it names the problem. */
function seconds(value: string | undefined): number | string | null {
  const trimmed = (value ?? "").trim();
  if (trimmed === "") return null;
  return /^\d{1,9}$/.test(trimmed) ? Number(trimmed) : trimmed;
}

export function clientUpdateInput(form: FormData) {
  const applicationId = text(form, "applicationId") ?? "";
  return {
    name: text(form, "name") ?? "",
    redirectUris: lines(text(form, "redirectUris")),
    postLogoutRedirectUris: lines(text(form, "postLogoutRedirectUris")),
    // Shown for clients a browser runs; a form without the field leaves the origins as they are.
    ...(form.has("allowedCorsOrigins") ? { allowedCorsOrigins: lines(text(form, "allowedCorsOrigins")) } : {}),
    // Confidential clients only (decision 053); a form without the field leaves the audiences as they are.
    ...(form.has("tokenExchangeAudiences") ? { tokenExchangeAudiences: lines(text(form, "tokenExchangeAudiences")) } : {}),
    scope: text(form, "scope") ?? "",
    grantTypes: list(form, "grantTypes"),
    // "" is the "no application" choice.
    applicationId: applicationId === "" ? null : applicationId,
    ...(form.has(SKIP_CONSENT_SHOWN) ? { skipConsent: form.get("skipConsent") === "yes" } : {}),
    // Shown for confidential code-flow clients only (decision 073); the schema names a bad value.
    ...(form.has("pkce") ? { pkce: text(form, "pkce") ?? "" } : {}),
    ...(form.has("accessTokenTtlSeconds") ? { accessTokenTtlSeconds: seconds(text(form, "accessTokenTtlSeconds")) } : {}),
    ...(form.has("refreshTokenTtlSeconds") ? { refreshTokenTtlSeconds: seconds(text(form, "refreshTokenTtlSeconds")) } : {}),
    // An unticked checkbox sends nothing: without the marker the form had none to send.
    ...(form.has(ADMIN_API_ACCESS_SHOWN) ? { adminApiAccess: form.get("adminApiAccess") === "yes" } : {}),
    // Back-channel logout (decision 048): an empty URI stops the logout tokens.
    ...(form.has(BACKCHANNEL_SHOWN)
      ? { backchannelLogoutUri: (text(form, "backchannelLogoutUri") ?? "").trim() || null, backchannelLogoutSessionRequired: form.get("backchannelLogoutSessionRequired") === "yes" }
      : {}),
    // Third-party initiated login (decision 083): an empty address clears it.
    ...(form.has("initiateLoginUri") ? { initiateLoginUri: (text(form, "initiateLoginUri") ?? "").trim() || null } : {}),
    // Client keys (decision 045): a JWK Set typed in, or the address it is published at.
    ...(form.has(KEYS_SHOWN) ? { jwks: keySet(text(form, "jwks")), jwksUri: (text(form, "jwksUri") ?? "").trim() || null } : {}),
  };
}

export type ClientFormValues = ReturnType<typeof clientUpdateInput>;
