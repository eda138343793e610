/**
 * Authentication context class references (OpenID Connect Core §2, `acr`), defined once. Porta
 * names how many independent factors the sign-in used, derived from its `amr` (RFC 8176): a
 * relying party that needs two factors asks with `acr_values` and checks the `acr` claim of
 * the ID token it gets. Decision 044.
 */
export const ACR = {
  /** One factor: a password, or a link sent by email. */
  oneFactor: "urn:porta:acr:1fa",
  /** Two independent factors: a password and a second factor (`amr` contains `mfa`). */
  twoFactors: "urn:porta:acr:2fa",
} as const;

export const ACR_VALUES = [ACR.oneFactor, ACR.twoFactors];

export function acrOf(amr: readonly string[] | undefined): string {
  return amr?.includes("mfa") ? ACR.twoFactors : ACR.oneFactor;
}
