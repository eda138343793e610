import { randomBytes, randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { hashClientSecret } from "~/.server/directory/clients";
import { basicAuth, postForm } from "../support/oidc";
import { scrapeMetrics } from "../support/metrics";
import { freePort, startTestPorta, type TestPorta } from "../support/porta";

/**
 * The metrics' label cardinality is bounded (decision 050). A thousand organizations
 * in use make no series that ten did not, and no series names one. It builds a thousand
 * providers, so it runs once in CI (on PostgreSQL; test/operations is not rerun embedded).
 */
let porta: TestPorta;
let metricsPort: number;

/** Every series in a scrape (name and labels), without the process's own metrics. */
const series = (text: string) => text.split("\n").filter((line) => line.startsWith("porta_") && !/^porta_(process|nodejs)_/.test(line)).map((line) => line.slice(0, line.lastIndexOf(" ")));

const scrape = () => scrapeMetrics(metricsPort);

beforeAll(async () => {
  metricsPort = await freePort();
  porta = await startTestPorta({ env: { METRICS_PORT: String(metricsPort) } });
});
afterAll(async () => {
  await porta?.stop();
});

describe("metrics with 1,000 organizations", () => {
  it("keeps the same series whether 10 or 1,000 organizations are in use, and never names one", async () => {
    const prisma = porta.services.db.prisma;
    // Written in three statements: a slow loop would leave the keep-alive connections idle past the server's timeout.
    const orgs = Array.from({ length: 1_000 }, () => {
      const tag = randomBytes(5).toString("hex");
      return { id: randomUUID(), slug: `m-${tag}`, clientId: `client-${tag}`, secret: randomBytes(32).toString("base64url") };
    });
    await prisma.organization.createMany({ data: orgs.map((o) => ({ id: o.id, slug: o.slug, name: `Metrics ${o.slug}` })) });
    await prisma.client.createMany({
      data: orgs.map((o) => ({
        id: o.clientId,
        organizationId: o.id,
        name: "Machine",
        applicationType: "web",
        tokenEndpointAuthMethod: "client_secret_basic",
        redirectUris: [],
        grantTypes: ["client_credentials"],
        scope: "openid",
      })),
    });
    await prisma.clientSecret.createMany({ data: orgs.map((o) => ({ clientId: o.clientId, secretHash: hashClientSecret(o.secret), hint: o.secret.slice(-4) })) });
    const use = async (batch: typeof orgs) => {
      for (let i = 0; i < batch.length; i += 25) {
        await Promise.all(
          batch.slice(i, i + 25).map(async (org) => {
            const issuer = `${porta.baseUrl}/${org.slug}`;
            expect((await fetch(`${issuer}/.well-known/openid-configuration`)).status).toBe(200);
            const grant = await postForm(`${issuer}/auth/token`, { grant_type: "client_credentials" }, { authorization: basicAuth(org.clientId, org.secret) });
            expect(grant.status).toBe(200);
            expect((await fetch(`${porta.baseUrl}/${org.slug}/no-such-page/${randomBytes(4).toString("hex")}`)).status).toBe(404);
          }),
        );
      }
    };
    await use(orgs.slice(0, 10));
    const few = new Set(series(await scrape()));
    await use(orgs.slice(10));
    const text = await scrape();
    const many = new Set(series(text));
    expect([...many].filter((s) => !few.has(s))).toEqual([]);
    for (const org of orgs.slice(0, 50)) expect(text).not.toContain(org.slug);
  }, 300_000);
});
