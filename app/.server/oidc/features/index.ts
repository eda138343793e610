import type { interactionPolicy } from "oidc-provider";
import type Provider from "oidc-provider";
import type { ConfigurationFragment, FeatureInput } from "../provider/configuration";
import type { PatchContext } from "../provider/patches";
import { acr } from "./acr";
import { apiResources } from "./api-resources";
import { backchannelLogout } from "./backchannel-logout";
import { clientPolicy } from "./client-policy";
import { deviceFlow } from "./device-flow";
import { dynamicRegistration } from "./dynamic-registration";
import { tokenExchange } from "./token-exchange";

/** A change a feature makes to each built provider; applied by provider/patches.ts only. */
export type Patch = (provider: Provider, context: PatchContext) => void;

/**
 * What one protocol feature of Porta changes in oidc-provider, all in its own module: what it adds
 * to the provider's configuration (provider/configuration.ts composes the fragments), the checks
 * it adds to the login prompt, and what it changes on each built provider (provider/patches.ts
 * applies the patches, in the order of FEATURES).
 */
export interface Feature {
  /** The module's name in features/ (oidc/features.test.ts holds every module to the list). */
  name: string;
  configuration?(input: FeatureInput): ConfigurationFragment;
  /** Checks of the login prompt, after the base's own (the interaction policy is the same for every organization). */
  loginChecks?: readonly interactionPolicy.Check[];
  patches?: readonly Patch[];
}

/**
 * Every feature, in the order its patches are applied (the device flow's middleware before the
 * others' provider changes, as they always were). A feature's module is the one place to read
 * what it changes.
 */
export const FEATURES: readonly Feature[] = [clientPolicy, acr, deviceFlow, tokenExchange, backchannelLogout, dynamicRegistration, apiResources];
