import { request } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createOrganization } from "./support/factories";
import { startTestPorta, type TestPorta } from "./support/porta";

/**
 * Every response carries one X-Request-Id, whichever door answered it (http/request-id.ts for
 * Express, http/well-known-first.ts before it): a client, a proxy or a log search reading the
 * header gets one id, never "a, b". Raw headers, because fetch would join a repeated header.
 */
let porta: TestPorta;
beforeAll(async () => {
  porta = await startTestPorta();
});
afterAll(async () => {
  await porta?.stop();
});

function requestIdsOf(url: string, headers: Record<string, string> = {}): Promise<{ status: number; ids: string[] }> {
  return new Promise((resolve, reject) => {
    const req = request(url, { headers }, (res) => {
      res.resume();
      res.on("end", () => {
        const ids: string[] = [];
        for (let i = 0; i < res.rawHeaders.length; i += 2) if (res.rawHeaders[i]!.toLowerCase() === "x-request-id") ids.push(res.rawHeaders[i + 1]!);
        resolve({ status: res.statusCode!, ids });
      });
    });
    req.on("error", reject);
    req.end();
  });
}

describe("X-Request-Id", () => {
  it("is sent once on Admin API errors and successes, pages, the protocol and discovery", async () => {
    const org = await createOrganization(porta.services.db.prisma);
    const cases: Array<[string, number]> = [
      ["/api/admin/organizations", 401],
      ["/api/admin/no-such-operation", 404],
      ["/api/admin/metadata", 200],
      ["/health", 200],
      ["/console/signed-out", 200],
      ["/console", 302],
      ["/no-such-page", 404],
      [`/${org.slug}/auth/authorize`, 400],
      [`/${org.slug}/.well-known/openid-configuration`, 200],
    ];
    for (const [path, status] of cases) {
      const res = await requestIdsOf(`${porta.url}${path}`);
      expect(res.status, path).toBe(status);
      expect(res.ids, path).toHaveLength(1);
      expect(res.ids[0], path).toMatch(/^[0-9a-f-]{36}$/);
    }
  });

  it("carries a proxy's id through an Admin API error, once", async () => {
    const res = await requestIdsOf(`${porta.url}/api/admin/organizations`, { "x-request-id": "proxy-request-0001" });
    expect(res).toEqual({ status: 401, ids: ["proxy-request-0001"] });
  });
});
