import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { createVerifier, protectedResourceMetadataHandler, requireBearerAuth, type AuthInfo } from "@porta/resource-server";
import { MCP_PORTS, MCP_RESOURCE, MCP_SCOPES } from "../mcp-seed";

export interface RunningMcpServer {
  url: string;
  close(): Promise<void>;
}

/** What the whoami tool answers: who the token speaks for, as the server saw it. */
function whoami(auth: AuthInfo | undefined) {
  return { sub: auth?.extra?.sub, clientId: auth?.clientId, scopes: auth?.scopes, resource: auth?.resource?.href };
}

/**
 * An MCP server as docs/mcp.md tells its author to write it: the SDK's McpServer over the
 * streamable HTTP transport (stateless: a server per request), behind @porta/resource-server's
 * RFC 9728 metadata and bearer middleware for the resource http://localhost:3961/mcp.
 */
export async function startMcpServer(issuer: string): Promise<RunningMcpServer> {
  const verifier = createVerifier({ issuer, resource: MCP_RESOURCE });
  const metadata = protectedResourceMetadataHandler({ resource: MCP_RESOURCE, issuer, scopesSupported: MCP_SCOPES, resourceName: "Werkstatt MCP" });
  const guard = requireBearerAuth({ verifier, requiredScopes: ["tools:call"] });

  async function serveMcp(req: IncomingMessage & { auth?: AuthInfo }, res: ServerResponse) {
    const mcp = new McpServer({ name: "werkstatt", version: "1.0.0" });
    mcp.registerTool("whoami", { description: "Who the access token speaks for" }, (extra) => ({
      content: [{ type: "text", text: JSON.stringify(whoami(extra.authInfo)) }],
    }));
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
    res.on("close", () => {
      void transport.close();
      void mcp.close();
    });
    await mcp.connect(transport);
    await transport.handleRequest(req, res);
  }

  const server: Server = createServer((req, res) =>
    metadata(req, res, () => {
      if (new URL(req.url ?? "/", MCP_RESOURCE).pathname !== "/mcp") {
        res.writeHead(404).end();
        return;
      }
      guard(req, res, (error?: unknown) => {
        if (error) {
          res.writeHead(500).end();
          return;
        }
        serveMcp(req, res).catch(() => {
          if (!res.headersSent) res.writeHead(500).end();
        });
      });
    }),
  );
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(MCP_PORTS.server, "127.0.0.1", resolve);
  });
  return {
    url: MCP_RESOURCE,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
