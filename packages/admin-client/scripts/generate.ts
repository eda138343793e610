import { writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { createServer } from "vite";
import { emitClient, type OpenApiDocument } from "./emit.js";

/**
 * `npm run generate:client`: builds the Admin API's OpenAPI document in-process (no server, no
 * database) through Vite, which resolves the operations' import.meta.glob, and writes the
 * generated operation table and types of the client library.
 */
const root = fileURLToPath(new URL("../../../", import.meta.url));
const target = fileURLToPath(new URL("../src/generated/operations.ts", import.meta.url));

const vite = await createServer({
  configFile: false,
  root,
  logLevel: "error",
  appType: "custom",
  server: { middlewareMode: true, hmr: false, watch: null },
  resolve: { alias: { "~": `${root}app` } },
  optimizeDeps: { noDiscovery: true, include: [] },
});
try {
  const mod = (await vite.ssrLoadModule("/app/.server/admin/http/openapi.ts")) as { buildOpenApiDocument(serverUrl: string): OpenApiDocument };
  writeFileSync(target, emitClient(mod.buildOpenApiDocument("http://localhost")));
  process.stdout.write(`wrote ${target}\n`);
} finally {
  await vite.close();
}
