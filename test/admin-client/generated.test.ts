import { readFileSync } from "node:fs";
import { expect, it } from "vitest";
import { buildOpenApiDocument } from "~/.server/admin/http/openapi";
import { emitClient, type OpenApiDocument } from "../../packages/admin-client/scripts/emit";

/**
 * The committed generated types of the admin client are exactly what the current server's
 * operations produce; after changing an operation, run `npm run generate:client`.
 */
it("matches the current Admin API (run `npm run generate:client` when this fails)", () => {
  const committed = readFileSync(new URL("../../packages/admin-client/src/generated/operations.ts", import.meta.url), "utf8");
  const fresh = emitClient(buildOpenApiDocument("http://localhost") as OpenApiDocument);
  expect(fresh).toBe(committed);
});

it("names operations as the spec's operations table does", () => {
  const ids = Object.values((buildOpenApiDocument("http://localhost") as OpenApiDocument).paths).flatMap((item) => Object.values(item).map((op) => op.operationId));
  for (const id of ["users.invitePreview", "usersById.getHistory", "customClaims.getValuesForUser", "keys.rotate", "twoFactor.getSummary"]) expect(ids).toContain(id);
  expect(ids.some((id) => id.startsWith("userClaims."))).toBe(false);
});
