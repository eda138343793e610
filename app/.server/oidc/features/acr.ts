import { interactionPolicy } from "oidc-provider";
import type { Feature } from "../feature";

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

/**
 * Step-up: the relying party would accept nothing less than two factors (`acr_values`, Core
 * §3.1.2.1, names no Porta level but 2fa; values Porta does not issue are ignored). Then a
 * sign-in that would end after one factor asks for a second one, and a session of one factor
 * signs in again. (The `claims` parameter, and with it an essential `acr` claim, is not
 * supported: discovery says `claims_parameter_supported: false`.) `params` are the authorization
 * request's.
 */
export function stepUpRequested(params: Record<string, unknown> | undefined): boolean {
  const values = typeof params?.acr_values === "string" ? params.acr_values.split(" ") : [];
  const known = values.filter((value) => (ACR_VALUES as readonly string[]).includes(value));
  return known.length > 0 && known.every((value) => value === ACR.twoFactors);
}

/**
 * Step-up as a feature of the provider: discovery names the two levels (`acr_values_supported`),
 * and a session of one factor does not answer a request that accepts only two: the person signs
 * in again and the sign-in asks for the second factor. Not after the sign-in just made: it reached
 * what it could, and the ID token's acr says so.
 */
export const acr: Feature = {
  name: "acr",
  configuration: () => ({ acrValues: ACR_VALUES }),
  loginChecks: [
    new interactionPolicy.Check(
      "acr_step_up",
      "the request asks for a sign-in with two factors",
      "login_required",
      (ctx) =>
        Boolean(ctx.oidc.session?.accountId) && !ctx.oidc.result?.login && stepUpRequested(ctx.oidc.params) && ctx.oidc.session?.acr !== ACR.twoFactors,
    ),
  ],
};
