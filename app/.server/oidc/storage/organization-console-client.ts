import type { ClientMetadata } from "oidc-provider";
import type { Organization } from "~/generated/prisma/client";
import { unstoredClientRecord, type ClientRecord } from "../../directory/clients";
import { clientPolicyMetadata } from "../features/client-policy";

/**
 * The organization console's own client, built in to every organization like the account page's
 * (account-client.ts): an organization's administrators sign in to `/{slug}/console` through the
 * organization's sign-in pages, under its login methods and two-factor policy, and get tokens for
 * the organization's administration door (decision 090). It is not a row: no one can edit,
 * delete or misconfigure it, and generated client ids never take this shape.
 */
export const ORGANIZATION_CONSOLE_CLIENT_ID = "porta-organization-console";
export const ORGANIZATION_CONSOLE_SCOPE = "openid profile email roles";

export const organizationConsoleCallback = (issuer: string) => `${issuer}/console/callback`;

/** The provider's view: a public code-flow client whose one redirect URI is the console's callback. */
export function organizationConsoleClientMetadata(issuer: string): ClientMetadata {
  return {
    client_id: ORGANIZATION_CONSOLE_CLIENT_ID,
    client_name: "Organization console",
    application_type: "web",
    token_endpoint_auth_method: "none",
    grant_types: ["authorization_code"],
    response_types: ["code"],
    redirect_uris: [organizationConsoleCallback(issuer)],
    post_logout_redirect_uris: [`${issuer}/console/signed-out`],
    scope: ORGANIZATION_CONSOLE_SCOPE,
    id_token_signed_response_alg: "ES256",
    // The organization's own console: never asked for consent.
    ...clientPolicyMetadata({ skipConsent: true }),
  };
}

/** The sign-in pages' and the door's view: an administration client (adminApiAccess) of the organization. */
export function organizationConsoleClientRecord(organization: Pick<Organization, "id" | "createdAt">, issuer: string): ClientRecord {
  return {
    ...unstoredClientRecord(
      {
        id: ORGANIZATION_CONSOLE_CLIENT_ID,
        organizationId: organization.id,
        name: "Organization console",
        applicationType: "web",
        tokenEndpointAuthMethod: "none",
        jwksUri: null,
        redirectUris: [organizationConsoleCallback(issuer)],
        postLogoutRedirectUris: [`${issuer}/console/signed-out`],
        grantTypes: ["authorization_code"],
        scope: ORGANIZATION_CONSOLE_SCOPE,
        skipConsent: true,
        pkce: "inherit",
      },
      organization.createdAt,
    ),
    adminApiAccess: true,
  };
}
