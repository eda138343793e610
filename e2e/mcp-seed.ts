import { createClient, createUser, giveRoleWithPermissions } from "../test/support/factories";
import type { Seed } from "./seed";

type Prisma = Parameters<typeof createClient>[0];

/**
 * Where e2e/mcp.spec.ts's MCP server and its client's callback listen, and where the harness
 * serves the second client's metadata document (e2e/mcp-documents.ts); fixed, since the resource
 * and the document are in place before the specs start.
 */
export const MCP_PORTS = { server: 3961, callback: 3962, documents: 3963 } as const;
/** The MCP client's redirect URI: a loopback page, as a desktop MCP client has. */
export const MCP_CALLBACK = `http://localhost:${MCP_PORTS.callback}/callback`;
export const MCP_RESOURCE = `http://localhost:${MCP_PORTS.server}/mcp`;
/** Another API of the same organization: its tokens must not open the MCP server. */
export const OTHER_RESOURCE = `http://localhost:${MCP_PORTS.server}/reports`;
export const MCP_SCOPES = ["tools:read", "tools:call"];

/**
 * The MCP organization (docs/mcp.md): open dynamic registration, as an MCP client needs to
 * register itself, client ID metadata documents accepted (an MCP client whose provider has a
 * document URL names itself by it; one without still registers), and the MCP server as an API
 * resource open to such clients. A confidential client granted the other resource stands for any
 * other API's token.
 */
export async function seedMcp(prisma: Prisma, baseUrl: string): Promise<NonNullable<Seed["mcp"]>> {
  const org = await prisma.organization.create({
    data: {
      slug: "e2e-mcp",
      name: "Model Context Werkstatt",
      defaultLoginMethods: ["password"],
      oauth21: true,
      registrationPolicy: { enabled: true, requireInitialAccessToken: false, allowedGrantTypes: ["authorization_code", "refresh_token"], allowedTokenEndpointAuthMethods: ["none"], clientIdMetadataDocuments: { enabled: true, allowedDomains: [] } },
    },
  });
  const password = "an mcp e2e password 5";
  const user = await createUser(prisma, org.id, { email: "agent-owner@mcp.example.test", password, givenName: "Grace", familyName: "Context", emailVerified: true });
  await prisma.apiResource.create({ data: { organizationId: org.id, identifier: MCP_RESOURCE, name: "Werkstatt MCP", scopes: MCP_SCOPES, openToDynamicClients: true } });
  // The person's role grants the MCP server's scopes: a person's token carries only those (decision 077).
  await giveRoleWithPermissions(prisma, org.id, user.id, "mcp-user", MCP_SCOPES);
  const other = await prisma.apiResource.create({ data: { organizationId: org.id, identifier: OTHER_RESOURCE, name: "Reports", scopes: ["reports:read"] } });
  const { client, secret } = await createClient(prisma, org.id, { grantTypes: ["client_credentials"], scope: "openid" });
  await prisma.clientResourceGrant.create({ data: { clientId: client.id, resourceId: other.id, scopes: ["reports:read"] } });
  return {
    issuer: `${baseUrl}/${org.slug}`,
    user: { email: user.email, password, id: user.id },
    otherResourceClient: { clientId: client.id, clientSecret: secret!.value },
  };
}
