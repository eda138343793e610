import type Provider from "oidc-provider";
import { acrOf } from "../features/acr";
import { addConsent } from "../storage/grants";

/**
 * Finishing an oidc-provider interaction without its req/res helpers: the login pages and the
 * protocol tests both use these, so the way a login or a consent is recorded exists once.
 */
export type Interaction = InstanceType<Provider["Interaction"]>;

export interface LoginResult {
  accountId: string;
  /** Authentication methods references, e.g. ["pwd"], ["pwd", "otp"], ["email"]. */
  amr?: string[];
  acr?: string;
  remember?: boolean;
}

/** Records the result and returns where the browser must go next (the provider's resume URL). */
export async function recordInteractionResult(interaction: Interaction, result: Record<string, unknown>): Promise<string> {
  interaction.result = { ...interaction.lastSubmission, ...result };
  await interaction.save(interaction.exp - Math.floor(Date.now() / 1000));
  return interaction.returnTo;
}

/** The `acr` follows from the factors (`amr`) unless the caller names one (oidc/features/acr.ts). */
export function recordLogin(interaction: Interaction, login: LoginResult): Promise<string> {
  return recordInteractionResult(interaction, { login: { ...login, acr: login.acr ?? acrOf(login.amr) } });
}

/**
 * Grants what the consent prompt found missing (OpenID scopes and claims, and the scopes of the
 * resource servers the tokens are for), extending this sign-in's grant when it has one. With
 * `newSignIn`, the consent goes into a new grant that starts as a copy of that one: the shared
 * admin client is used by several installations (the console, each CLI), often through one
 * browser and its one provider session, and each of their sign-ins must end on its own.
 */
export async function grantMissingConsent(provider: Provider, interaction: Interaction, options: { newSignIn?: boolean } = {}): Promise<string> {
  const { prompt, params, session, grantId } = interaction;
  const accountId = session?.accountId;
  if (!accountId) throw new Error("consent needs a signed-in account");
  const existing = grantId ? await provider.Grant.find(grantId) : undefined;
  let grant = existing;
  if (!grant || options.newSignIn) {
    grant = new provider.Grant({ accountId, clientId: String(params.client_id) });
    if (existing) addConsent(grant, existing);
  }
  const details = prompt.details as {
    missingOIDCScope?: string[];
    missingOIDCClaims?: string[];
    missingResourceScopes?: Record<string, string[]>;
  };
  if (details.missingOIDCScope) grant.addOIDCScope(details.missingOIDCScope.join(" "));
  if (details.missingOIDCClaims) grant.addOIDCClaims(details.missingOIDCClaims);
  for (const [indicator, scopes] of Object.entries(details.missingResourceScopes ?? {})) {
    grant.addResourceScope(indicator, scopes.join(" "));
  }
  return grant.save();
}

export async function recordConsent(provider: Provider, interaction: Interaction, options: { newSignIn?: boolean } = {}): Promise<string> {
  const grantId = await grantMissingConsent(provider, interaction, options);
  return recordInteractionResult(interaction, { consent: { grantId } });
}
