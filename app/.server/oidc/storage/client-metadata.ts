import type { Adapter, ClientAuthMethod, ClientMetadata, JWKS } from "oidc-provider";
import { TOKEN_EXCHANGE_GRANT, usesSecret } from "~/schemas/client";
import type { Organization, PrismaClient } from "~/generated/prisma/client";
import type { ReadThroughCache } from "../../cache/read-through";
import { getClientRecord, isClientUsable, type ClientRecord } from "../../directory/clients";
import { ACCOUNT_CLIENT_ID, accountClientMetadata } from "./account-client";
import { ORGANIZATION_CONSOLE_CLIENT_ID, organizationConsoleClientMetadata } from "./organization-console-client";
import type { MetadataDocumentClients } from "./client-metadata-documents";
import { getMetadataDocumentClient } from "./document-clients";
import { clientPolicyMetadata } from "../features/client-policy";

/**
 * Confidential clients are registered with this marker instead of a secret: Porta keeps only
 * hashes of client secrets, and provider/patches.ts replaces the secret comparison with a check of
 * those hashes. HS* algorithms are disabled, so the marker is never used as a key either.
 */
export const HASHED_SECRET_MARKER = "porta:hashed-secrets";

/** Partial: a client record cached before the column existed has none. */
const exchangesTokens = (client: ClientRecord) => (client.tokenExchangeAudiences?.length ?? 0) > 0 && client.tokenEndpointAuthMethod !== "none";

export function toClientMetadata(client: ClientRecord): ClientMetadata {
  const codeFlow = client.grantTypes.includes("authorization_code");
  return {
    client_id: client.id,
    client_name: client.name,
    application_type: client.applicationType as "web" | "native",
    token_endpoint_auth_method: client.tokenEndpointAuthMethod as ClientAuthMethod,
    ...(usesSecret(client.tokenEndpointAuthMethod) ? { client_secret: HASHED_SECRET_MARKER } : {}),
    // Public keys for private_key_jwt and signed request objects (ES256 only, checked when stored).
    ...(client.jwks ? { jwks: client.jwks as unknown as JWKS } : {}),
    ...(client.jwksUri ? { jwks_uri: client.jwksUri } : {}),
    // A confidential client with token exchange audiences has the grant (decision 053); the
    // provider answers any other client's exchange with unauthorized_client (provider/patches.ts).
    grant_types: exchangesTokens(client) ? [...client.grantTypes, TOKEN_EXCHANGE_GRANT] : client.grantTypes,
    response_types: codeFlow ? ["code"] : [],
    redirect_uris: codeFlow ? client.redirectUris : [],
    post_logout_redirect_uris: client.postLogoutRedirectUris,
    scope: client.scope,
    id_token_signed_response_alg: "ES256",
    ...clientPolicyMetadata(client),
    // Back-channel logout (decision 048); a client cached before these columns existed has none.
    ...(client.backchannelLogoutUri ? { backchannel_logout_uri: client.backchannelLogoutUri, backchannel_logout_session_required: client.backchannelLogoutSessionRequired === true } : {}),
  };
}

/**
 * The provider's Client model reads through the cache to PostgreSQL, for this organization only;
 * the account page's built-in client is every organization's own, and an https client_id is a
 * client metadata document's when the organization allows them (client-metadata-documents.ts).
 */
export function createClientAdapter(
  prisma: PrismaClient,
  cache: ReadThroughCache,
  organization: Pick<Organization, "id" | "createdAt" | "registrationPolicy">,
  issuer: string,
  documents: MetadataDocumentClients | undefined,
): Adapter {
  const unsupported = async () => undefined;
  return {
    async find(id) {
      if (id === ACCOUNT_CLIENT_ID) return accountClientMetadata(issuer);
      if (id === ORGANIZATION_CONSOLE_CLIENT_ID) return organizationConsoleClientMetadata(issuer);
      const described = documents ? await getMetadataDocumentClient(organization, id, documents) : null;
      if (described) return toClientMetadata(described);
      const client = await getClientRecord(prisma, cache, id);
      if (!client || client.organizationId !== organization.id || !isClientUsable(client)) return undefined;
      return toClientMetadata(client);
    },
    upsert: unsupported,
    findByUid: unsupported,
    findByUserCode: unsupported,
    consume: unsupported,
    destroy: unsupported,
    revokeByGrantId: unsupported,
  };
}
