import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createClient, createOrganization } from "../support/factories";
import { scrapeMetrics } from "../support/metrics";
import { basicAuth, issuerOf, postForm, type OrgRef } from "../support/oidc";
import { freePort, startTestPorta, type TestPorta } from "../support/porta";
import { startPrivateRedis, type RedisServer } from "../support/process";

/**
 * The metrics (decision 050) keep answering at once while
 * Redis is frozen or killed, say so in `porta_cache_up`, and keep counting the grants that go on
 * without it. The Redis is a private server this test freezes and kills.
 */
const SLOW = { timeout: 120_000 };

describe("metrics while Redis is frozen, killed and back", () => {
  let redis: RedisServer;
  let porta: TestPorta;
  let metricsPort: number;
  let org: OrgRef;
  let client: { id: string; secret: string };

  beforeAll(async () => {
    redis = await startPrivateRedis();
    metricsPort = await freePort();
    porta = await startTestPorta({ env: { REDIS_URL: redis.url, METRICS_PORT: String(metricsPort) } });
    org = await createOrganization(porta.services.db.prisma);
    const created = await createClient(porta.services.db.prisma, org.id, { grantTypes: ["client_credentials"] });
    client = { id: created.client.id, secret: created.secret!.value };
  }, 120_000);

  afterAll(async () => {
    redis?.signal("SIGCONT");
    await porta?.stop();
    await redis?.stop();
  }, 60_000);

  const cacheUp = (text: string) => Number(/^porta_cache_up\{kind="redis"\} (\d+)$/m.exec(text)?.[1]);
  const granted = (text: string) => Number(/^porta_oidc_grants_total\{grant_type="client_credentials",outcome="success"\} (\d+)$/m.exec(text)?.[1] ?? 0);
  const grant = async () => {
    const answer = await postForm(`${issuerOf(porta, org)}/auth/token`, { grant_type: "client_credentials" }, { authorization: basicAuth(client.id, client.secret) });
    expect(answer.status).toBe(200);
  };

  it("reports the cache up, then down at once when Redis freezes (the scrape does not wait for it), and counts grants made without it", SLOW, async () => {
    await grant();
    const before = await scrapeMetrics(metricsPort);
    expect(cacheUp(before)).toBe(1);

    redis.signal("SIGSTOP");
    const started = Date.now();
    const frozen = await scrapeMetrics(metricsPort);
    expect(Date.now() - started).toBeLessThan(3_000);
    expect(cacheUp(frozen)).toBe(0);

    await redis.stop();
    await grant();
    const killed = await scrapeMetrics(metricsPort);
    expect(cacheUp(killed)).toBe(0);
    expect(granted(killed) - granted(before)).toBe(1);

    await redis.start();
    await expect.poll(async () => cacheUp(await scrapeMetrics(metricsPort)), { timeout: 30_000, interval: 500 }).toBe(1);
  });
});
