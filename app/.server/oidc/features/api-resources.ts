import { parseMetadataDocumentClientId } from "~/schemas/client-metadata-document";
import { errors, type Client, type Configuration } from "oidc-provider";
import { isAdminApiClient, organizationAdminResource } from "../../admin/api-access";
import { ORGANIZATION_CONSOLE_CLIENT_ID } from "../storage/organization-console-client";
import { getClientRecord } from "../../directory/clients";
import type { TenantApiResource } from "../provider/tenant-load";
import { refuseUnknownClientCredentialsScopes } from "../provider/token-errors";
import { accessTokenTtlOf } from "./client-policy";
import type { Feature, FeatureInput } from "../feature";

/**
 * RFC 8707 resource indicators (decisions 017, 077). Every access token is an ES256 JWT for one
 * resource: the organization's own (its issuer), or, for an admin client of the super-admin
 * organization, the Admin API, or an API resource of the organization that the client was
 * granted (Admin API: /organizations/{orgId}/api-resources, /clients/{id}/api-resources). The
 * resources and their grants come with the provider's build (provider/tenant-load.ts); any other
 * `resource` is `invalid_target`.
 */

/**
 * What a token for this resource may carry: the scopes the client was granted that the resource
 * still defines; for a client that registered itself (RFC 7591, as MCP clients do) without a
 * grant, every scope of a resource open to such clients (the person consents to them: such a
 * resource always asks, admin/api-resources/service.ts).
 */
export function grantedScopesOf(resource: TenantApiResource, clientId: string, dynamicallyRegistered = false): string[] | undefined {
  // Own keys only: a client id such as "constructor" must not find the object's prototype.
  if (!Object.hasOwn(resource.grants, clientId)) return resource.openToDynamicClients && dynamicallyRegistered ? [...resource.scopes] : undefined;
  const granted = resource.grants[clientId]!;
  const defined = new Set(resource.scopes);
  return granted.filter((scope) => defined.has(scope));
}

/**
 * The scopes among `scopes` that a person's roles grant: a role grants a resource's scope when it
 * holds a permission of the organization named exactly as the scope (decision 077, "Roles limit a
 * person's scopes"). Only roles and permissions of this organization count, whatever rows say.
 */
export async function scopesGrantedToPerson(sql: FeatureInput["sql"], organizationId: string, userId: string, scopes: readonly string[]): Promise<Set<string>> {
  if (scopes.length === 0) return new Set();
  const rows = await sql.query<{ name: string }>(
    `SELECT DISTINCT p."name" FROM "UserRole" ur
       JOIN "Role" r ON r."id" = ur."roleId" AND r."organizationId" = $2::uuid
       JOIN "RolePermission" rp ON rp."roleId" = r."id"
       JOIN "Permission" p ON p."id" = rp."permissionId" AND p."organizationId" = $2::uuid
     WHERE ur."userId" = $1::uuid AND p."name" = ANY($3::text[])`,
    [userId, organizationId, scopes],
  );
  return new Set(rows.map((row) => row.name));
}

type ResourceIndicators = NonNullable<NonNullable<Configuration["features"]>["resourceIndicators"]>;

/** The resource indicators feature of one organization's provider. */
export function resourceIndicatorsOf(input: FeatureInput): ResourceIndicators {
  const { issuer, prisma, sql, cache, adminApiResource, accessTokenTtl, organization } = input;
  const knownScopes: ReadonlySet<string> = new Set(input.scopes);
  const byIdentifier = new Map((input.apiResources ?? []).map((resource) => [resource.identifier, resource]));
  const mayUseAdminApiResource = async (clientId: string) => {
    if (!adminApiResource) return false;
    // The organization console's built-in client, for the organization's own door only (decision 090).
    if (clientId === ORGANIZATION_CONSOLE_CLIENT_ID) return adminApiResource === organizationAdminResource(issuer);
    const client = await getClientRecord(prisma, cache, clientId);
    return Boolean(client && isAdminApiClient(client));
  };
  /**
   * A client that registered itself at the registration endpoint (decision 054), or that the
   * provider knows from its client ID metadata document (an https client_id with no registered
   * client behind it): neither has a grant an administrator could have made beforehand.
   */
  const isDynamicallyRegistered = async (clientId: string) => {
    const client = await getClientRecord(prisma, cache, clientId);
    if (!client) return parseMetadataDocumentClientId(clientId) !== null;
    return client.registrationAccessTokenHash !== null;
  };
  const ownResource = (client: Client) => {
    const allowed = new Set((client.scope ?? input.scopes.join(" ")).split(" "));
    return input.scopes.filter((s) => allowed.has(s)).join(" ");
  };
  const jwt = (audience: string, scope: string, accessTokenTTL: number) => ({ scope, audience, accessTokenFormat: "jwt" as const, accessTokenTTL, jwt: { sign: { alg: "ES256" as const } } });

  return {
    enabled: true,
    // Without `resource`, the token is for the organization itself, or for the Admin API.
    async defaultResource(_ctx, client, oneOf) {
      if (oneOf) return oneOf;
      return (await mayUseAdminApiResource(client.clientId)) ? adminApiResource! : issuer;
    },
    async useGrantedResource() {
      return true;
    },
    async getResourceServerInfo(ctx, resourceIndicator, client) {
      // The organization itself and the Admin API come first: a registered resource cannot take their place.
      const own = resourceIndicator === issuer || (resourceIndicator === adminApiResource && (await mayUseAdminApiResource(client.clientId)));
      const resource = own ? undefined : byIdentifier.get(resourceIndicator);
      const dynamic = resource !== undefined && resource.openToDynamicClients && !Object.hasOwn(resource.grants, client.clientId) && (await isDynamicallyRegistered(client.clientId));
      const granted = resource && grantedScopesOf(resource, client.clientId, dynamic);
      if (!own && !granted) throw new errors.InvalidTarget();
      // client_credentials names scopes of the organization or of the resource asked for (decision 071).
      refuseUnknownClientCredentialsScopes(ctx, resource && granted ? new Set([...knownScopes, ...resource.scopes]) : knownScopes, input.userScopes);
      if (resource && granted) {
        // A person's token (code, refresh, device flow: the grant has loaded the account) carries
        // only what the person's roles grant too; a machine's (client_credentials) only its grant.
        const account = ctx.oidc.account;
        const allowed = account ? await scopesGrantedToPerson(sql, organization.id, account.accountId, granted) : undefined;
        const scopes = allowed ? granted.filter((scope) => allowed.has(scope)) : granted;
        return jwt(resource.identifier, scopes.join(" "), resource.accessTokenTtlSeconds ?? accessTokenTtlOf(client, accessTokenTtl));
      }
      return jwt(resourceIndicator, ownResource(client), accessTokenTtlOf(client, accessTokenTtl));
    },
  };
}

export const apiResources: Feature = {
  name: "api-resources",
  configuration: (input) => ({ features: { resourceIndicators: resourceIndicatorsOf(input) } }),
};
