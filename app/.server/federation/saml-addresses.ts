import { organizationIssuer } from "../oidc/edge/endpoints";

/**
 * Where a SAML connection lives under its organization's prefix (decision 081). The SP entity ID
 * is the address of the SP metadata, as most IdPs expect; the Assertion Consumer Service takes
 * the IdP's HTTP-POST response. Each connection has its own, so an assertion for one connection
 * (its audience, its recipient) is refused by every other one, in this organization or another.
 */
export function samlAddresses(baseUrl: string, slug: string, providerId: string) {
  const base = `${organizationIssuer(baseUrl, slug)}/saml/${encodeURIComponent(providerId)}`;
  return { entityId: `${base}/metadata`, metadataUrl: `${base}/metadata`, acsUrl: `${base}/acs` };
}
export type SamlAddresses = ReturnType<typeof samlAddresses>;
