import { registrationPolicyOf } from "~/schemas/registration";
import { registrationEndpointOf } from "../../registration/paths";
import type { Feature } from "../feature";

/**
 * Porta's own registration endpoint (registration/, decision 054) is served outside the
 * provider; discovery names it while the organization's registration policy keeps it open, and
 * says so while the policy accepts client ID metadata documents (storage/client-metadata-documents.ts).
 */
export const dynamicRegistration: Feature = {
  name: "dynamic-registration",
  configuration: ({ organization, issuer }) => {
    const policy = registrationPolicyOf(organization.registrationPolicy);
    return {
      discovery: {
        ...(policy.enabled ? { registration_endpoint: registrationEndpointOf(issuer) } : {}),
        ...(policy.clientIdMetadataDocuments.enabled ? { client_id_metadata_document_supported: true } : {}),
      },
    };
  },
};
