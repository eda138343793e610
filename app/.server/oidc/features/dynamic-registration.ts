import { registrationPolicyOf } from "~/schemas/registration";
import { registrationEndpointOf } from "../../registration/paths";
import type { Feature } from "../feature";

/**
 * Porta's own registration endpoint (registration/, decision 054) is served outside the
 * provider; discovery names it while the organization's registration policy keeps it open.
 */
export const dynamicRegistration: Feature = {
  name: "dynamic-registration",
  configuration: ({ organization, issuer }) => ({
    discovery: registrationPolicyOf(organization.registrationPolicy).enabled ? { registration_endpoint: registrationEndpointOf(issuer) } : {},
  }),
};
