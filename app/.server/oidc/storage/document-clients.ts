import type { Organization } from "~/generated/prisma/client";
import { isAllowedDocumentHost, parseMetadataDocumentClientId, type ClientMetadataDocument } from "~/schemas/client-metadata-document";
import { registrationPolicyOf } from "~/schemas/registration";
import type { ClientRecord } from "../../directory/clients";
import type { MetadataDocumentClients } from "./client-metadata-documents";

/**
 * The client an https client_id names, for an organization that accepts client ID metadata
 * documents: described as Porta's registered clients are (a ClientRecord), so the provider's
 * client lookup and the sign-in pages treat it like any other public client.
 */
/** Scopes a document's client may ask for: what a registered client gets by default. */
const DOCUMENT_CLIENT_SCOPE = "openid profile email offline_access";

/** The client a document describes, as Porta's other clients are described: public, consent always asked. */
export function metadataDocumentClientRecord(document: ClientMetadataDocument, organization: Pick<Organization, "id" | "createdAt">): ClientRecord {
  return {
    id: document.clientId,
    organizationId: organization.id,
    applicationId: null,
    name: document.name ?? document.domain,
    applicationType: document.applicationType,
    tokenEndpointAuthMethod: document.tokenEndpointAuthMethod,
    jwks: null,
    jwksUri: document.jwksUri,
    redirectUris: document.redirectUris,
    postLogoutRedirectUris: document.postLogoutRedirectUris,
    grantTypes: document.grantTypes,
    scope: DOCUMENT_CLIENT_SCOPE,
    loginMethods: [],
    status: "active",
    adminApiAccess: false,
    allowedCorsOrigins: [],
    skipConsent: false,
    pkce: "required",
    accessTokenTtlSeconds: null,
    refreshTokenTtlSeconds: null,
    backchannelLogoutUri: null,
    backchannelLogoutSessionRequired: false,
    tokenExchangeAudiences: [],
    registrationAccessTokenHash: null,
    version: 1,
    createdAt: organization.createdAt,
    updatedAt: organization.createdAt,
    applicationStatus: null,
    activeSecrets: [],
  };
}

/**
 * The client of an https client_id in this organization: null unless the organization allows
 * metadata documents from the URL's host and the document there is usable.
 */
export async function getMetadataDocumentClient(
  organization: Pick<Organization, "id" | "createdAt" | "registrationPolicy">,
  clientId: string,
  documents: MetadataDocumentClients,
): Promise<ClientRecord | null> {
  const url = parseMetadataDocumentClientId(clientId);
  if (!url) return null;
  const policy = registrationPolicyOf(organization.registrationPolicy).clientIdMetadataDocuments;
  if (!policy.enabled || !isAllowedDocumentHost(policy, url.hostname)) return null;
  const found = await documents.lookup(url);
  return found.ok ? metadataDocumentClientRecord(found.document, organization) : null;
}
