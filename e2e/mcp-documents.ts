import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { createServer, type Server } from "node:https";
import { tmpdir } from "node:os";
import path from "node:path";
import { rootCertificates } from "node:tls";
import { MCP_PORTS } from "./mcp-seed";

/**
 * The client ID metadata document of e2e/mcp.spec.ts's second MCP client: served over TLS on
 * 127.0.0.1 with a self-signed certificate made here by openssl, in the process that runs Porta
 * (e2e/server.ts), which trusts that certificate as a closed network's machines trust its CA.
 * Porta's own outbound rules stay as they are: the harness runs with private networks allowed,
 * and the document is https like any other.
 *
 * `GET /requests` tells the spec how often the document was fetched (the spec reaches it with the
 * certificate from the seed).
 */
export const AGENT_DOCUMENT_URL = `https://127.0.0.1:${MCP_PORTS.documents}/agents/werkstatt.json`;
const DOCUMENT_PATH = new URL(AGENT_DOCUMENT_URL).pathname;
/** Where Node's own fetch finds its dispatcher (its bundled undici). */
const DISPATCHER = Symbol.for("undici.globalDispatcher.1");

export interface RunningAgentDocuments {
  url: string;
  /** The server's certificate (PEM): the spec trusts it to read `/requests`. */
  certificate: string;
  close(): Promise<void>;
}

/** The document as an MCP client built on the SDK publishes it: a public client with a loopback callback. */
function agentDocument(callback: string) {
  return {
    client_id: AGENT_DOCUMENT_URL,
    client_name: "Werkstatt Document Agent",
    redirect_uris: [callback],
    grant_types: ["authorization_code", "refresh_token"],
    response_types: ["code"],
    token_endpoint_auth_method: "none",
  };
}

export async function startAgentDocuments(callback: string): Promise<RunningAgentDocuments> {
  const dir = mkdtempSync(path.join(tmpdir(), "porta-e2e-cimd-"));
  try {
    execFileSync(
      "openssl",
      ["req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-days", "1", "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1",
        "-keyout", path.join(dir, "key.pem"), "-out", path.join(dir, "cert.pem")],
      { stdio: "ignore" },
    );
    const certificate = readFileSync(path.join(dir, "cert.pem"), "utf8");
    const key = readFileSync(path.join(dir, "key.pem"));
    let fetched = 0;
    const body = JSON.stringify(agentDocument(callback));
    const server: Server = createServer({ key, cert: certificate }, (req, res) => {
      const pathname = new URL(req.url ?? "/", AGENT_DOCUMENT_URL).pathname;
      if (pathname === DOCUMENT_PATH) {
        fetched += 1;
        res.writeHead(200, { "content-type": "application/json", "cache-control": "max-age=600" }).end(body);
      } else if (pathname === "/requests") {
        res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ [DOCUMENT_PATH]: fetched }));
      } else {
        res.writeHead(404).end();
      }
    });
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen(MCP_PORTS.documents, "127.0.0.1", resolve);
    });
    await trustInThisProcess(certificate);
    return {
      url: AGENT_DOCUMENT_URL,
      certificate,
      close: () =>
        new Promise<void>((resolve) => {
          server.close(() => resolve());
          server.closeAllConnections();
        }),
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * Node's fetch (which Porta's outbound requests use) trusts the certificate besides the usual
 * roots, in this test process only.
 */
async function trustInThisProcess(certificate: string) {
  await fetch("data:,"); // makes Node create its global dispatcher
  const globals = globalThis as unknown as Record<symbol, { constructor: new (options: unknown) => unknown }>;
  const Agent = globals[DISPATCHER]?.constructor;
  if (!Agent) throw new Error("no global undici dispatcher to extend with the test certificate");
  globals[DISPATCHER] = new Agent({ connect: { ca: [...rootCertificates, certificate] } }) as { constructor: new (options: unknown) => unknown };
}
