import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { adminApi, obtainAdminTokens } from "../support/admin-api";
import { startTestPorta, type TestPorta } from "../support/porta";
import { startPrivatePostgres, type PostgresServer } from "../support/process";

/**
 * With its PostgreSQL stopped, Porta answers 503 with Retry-After everywhere (Admin API,
 * protocol endpoints), never a 401 that would make a client drop good credentials, and it
 * serves the same tokens again once the database is back. The database is a private server
 * this test stops and starts; the shared one is never touched.
 */
const SLOW = { timeout: 180_000 };

describe("PostgreSQL down", () => {
  let pg: PostgresServer;
  let porta: TestPorta;
  let token: string;

  beforeAll(async () => {
    pg = await startPrivatePostgres();
    porta = await startTestPorta({ databaseUrl: pg.url, env: { REDIS_URL: undefined } });
    token = (await obtainAdminTokens(porta)).accessToken;
  }, 180_000);

  afterAll(async () => {
    await pg?.start().catch(() => undefined);
    await porta?.stop();
    await pg?.dispose();
  }, 60_000);

  it("answers 503 with Retry-After, never 401, and accepts the same token once the database is back", SLOW, async () => {
    const api = adminApi(porta, token);
    expect((await api.get("/organizations")).status).toBe(200);
    // A token whose key id this process has not seen makes it reload the keys from the database.
    const [header, payload, signature] = token.split(".");
    const otherKid = Buffer.from(JSON.stringify({ ...JSON.parse(Buffer.from(header!, "base64url").toString("utf8")), kid: "rotated-elsewhere" })).toString("base64url");
    const unknownKeyApi = adminApi(porta, [otherKid, payload, signature].join("."));
    const slug = porta.services.config.superAdminSlug;

    // Keys are reloaded for an unknown key id at most once a second.
    await new Promise((resolve) => setTimeout(resolve, 1_100));
    await pg.kill();
    try {
      const calls = { list: () => api.get("/organizations"), create: () => api.post("/organizations", { name: "Down", slug: "down" }), unknownKey: () => unknownKeyApi.get("/organizations") };
      for (const [name, call] of Object.entries(calls)) {
        const res = await call();
        expect(res.status, `${name}: ${JSON.stringify(res.body)}`).toBe(503);
        expect(res.headers.get("retry-after")).toBe("5");
        expect(res.body).toMatchObject({ error: { code: "unavailable" } });
      }

      const grant = await fetch(`${porta.baseUrl}/${slug}/token`, {
        method: "POST",
        headers: { "content-type": "application/x-www-form-urlencoded" },
        body: new URLSearchParams({ grant_type: "client_credentials", client_id: "some-machine", client_secret: "s3cret" }),
      });
      expect(grant.status).toBe(503);
      expect(grant.headers.get("retry-after")).toBe("5");
      expect(await grant.json()).toMatchObject({ error: "temporarily_unavailable" });

      const page = await fetch(`${porta.baseUrl}/${slug}/invitation?token=${"x".repeat(43)}`);
      expect(page.status).toBe(503);
      expect(page.headers.get("retry-after")).toBe("5");
      expect(await page.text()).toContain("Try again shortly");

      // Orchestrators: not ready (no traffic), but alive (a restart would not bring the database back).
      const ready = await fetch(`${porta.baseUrl}/health/ready`);
      expect(ready.status).toBe(503);
      expect(await ready.json()).toMatchObject({ status: "not_ready", checks: { database: "unavailable" } });
      expect((await fetch(`${porta.baseUrl}/health/live`)).status).toBe(200);

      const unavailableLines = porta.logs.lines.filter((line) => String(line.msg).startsWith("database unavailable"));
      expect(unavailableLines.length).toBeGreaterThanOrEqual(5);
      expect(unavailableLines.every((line) => line.err === undefined && line.level !== 50)).toBe(true);
    } finally {
      await pg.start();
    }

    let status = 0;
    for (const deadline = Date.now() + 30_000; Date.now() < deadline; await new Promise((r) => setTimeout(r, 250))) {
      status = (await api.get("/organizations")).status;
      if (status === 200) break;
      expect(status).toBe(503);
    }
    expect(status).toBe(200);
    expect((await api.post("/organizations", { name: "Back", slug: "back-again" })).status).toBe(201);
  });
});
