import type { ClientMetadata } from "oidc-provider";
import type { Organization } from "~/generated/prisma/client";
import { unstoredClientRecord, type ClientRecord } from "../../directory/clients";
import { clientPolicyMetadata } from "../features/client-policy";
import { organizationIssuer } from "../edge/endpoints";

/**
 * The account page's own client, built in to every organization (like Keycloak's
 * `account-console`): a person signs in to `/{slug}/account` through the organization's sign-in
 * pages, under its default login methods and two-factor policy. It is not a row: no operator can
 * edit, delete or misconfigure it, and generated client ids never take this shape.
 */
export const ACCOUNT_CLIENT_ID = "porta-account";

/** The account page lives under its organization's issuer. */
export const accountPageOfIssuer = (issuer: string) => `${issuer}/account`;
export const accountPageUrl = (baseUrl: string, slug: string) => accountPageOfIssuer(organizationIssuer(baseUrl, slug));
export const accountCallbackUri = (baseUrl: string, slug: string) => `${organizationIssuer(baseUrl, slug)}/account/callback`;

/** The provider's view: a public code-flow client whose one redirect URI is the account page's callback. */
export function accountClientMetadata(issuer: string): ClientMetadata {
  return {
    client_id: ACCOUNT_CLIENT_ID,
    client_name: "Account",
    application_type: "web",
    token_endpoint_auth_method: "none",
    grant_types: ["authorization_code"],
    response_types: ["code"],
    redirect_uris: [`${issuer}/account/callback`],
    post_logout_redirect_uris: [`${issuer}/account/signed-out`],
    scope: "openid",
    id_token_signed_response_alg: "ES256",
    // The organization's own page: never asked for consent, by the same rule as any first-party client.
    ...clientPolicyMetadata({ skipConsent: true }),
  };
}

/** The sign-in pages' view: the login methods are the organization's default (no override). */
export function accountClientRecord(organization: Pick<Organization, "id" | "createdAt">, issuer: string): ClientRecord {
  return unstoredClientRecord(
    {
      id: ACCOUNT_CLIENT_ID,
      organizationId: organization.id,
      name: "Account",
      applicationType: "web",
      tokenEndpointAuthMethod: "none",
      jwksUri: null,
      redirectUris: [`${issuer}/account/callback`],
      postLogoutRedirectUris: [`${issuer}/account/signed-out`],
      grantTypes: ["authorization_code"],
      scope: "openid",
      // The organization's own page: never asked for consent.
      skipConsent: true,
      pkce: "inherit",
    },
    organization.createdAt,
  );
}
