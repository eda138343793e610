import type { Feature } from "../feature";
import { acr } from "./acr";
import { apiResources } from "./api-resources";
import { backchannelLogout } from "./backchannel-logout";
import { clientPolicy } from "./client-policy";
import { deviceFlow } from "./device-flow";
import { dynamicRegistration } from "./dynamic-registration";
import { tokenExchange } from "./token-exchange";

export type { Feature, Patch } from "../feature";

/**
 * Every feature, in the order its patches are applied (the device flow's middleware before the
 * others' provider changes, as they always were). A feature's module is the one place to read
 * what it changes.
 */
export const FEATURES: readonly Feature[] = [clientPolicy, acr, deviceFlow, tokenExchange, backchannelLogout, dynamicRegistration, apiResources];
