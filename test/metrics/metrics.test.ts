import { readFileSync } from "node:fs";
import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTenant, passwordSignIn, PASSWORD, type Tenant } from "../email/helpers";
import { createClient, createUser } from "../support/factories";
import { basicAuth, postForm } from "../support/oidc";
import { scrapeMetrics } from "../support/metrics";
import { freePort, startTestPorta, type TestPorta } from "../support/porta";

/**
 * Observing Porta: Prometheus metrics (decision 050). Counters move with a scripted sign-in
 * and grants, and the scrape is off the public surface (its own port, or the main port only
 * with the bearer). That the series do not grow with organizations: test/operations/metrics-cardinality.test.ts.
 */
const TOKEN = randomBytes(32).toString("hex");
let porta: TestPorta;
let metricsPort: number;
let tenant: Tenant;

/** One sample's value, or 0 when the series does not exist yet. */
function sample(text: string, name: string, labels: Record<string, string> = {}): number {
  const wanted = Object.entries(labels).map(([k, v]) => `${k}="${v}"`);
  for (const line of text.split("\n")) {
    if (!line.startsWith(`${name}{`) && !line.startsWith(`${name} `)) continue;
    const braces = /^[^{ ]+(?:\{(.*)\})? (\S+)$/.exec(line);
    const present = (braces?.[1] ?? "").split(/,(?=[a-z_]+=")/);
    if (wanted.every((pair) => present.includes(pair))) return Number(braces?.[2]);
  }
  return 0;
}

const scrape = () => scrapeMetrics(metricsPort);

beforeAll(async () => {
  metricsPort = await freePort();
  porta = await startTestPorta({ env: { METRICS_PORT: String(metricsPort), METRICS_TOKEN: TOKEN } });
  tenant = await createTenant(porta, { defaultLoginMethods: ["password"] });
});
afterAll(async () => {
  await porta?.stop();
});

describe("/metrics", () => {
  it("answers on its own port in Prometheus's text format, and on the main port only with the bearer token", async () => {
    const own = await fetch(`http://127.0.0.1:${metricsPort}/metrics`);
    expect(own.status).toBe(200);
    expect(own.headers.get("content-type")).toMatch(/^text\/plain; version=0\.0\.4/);
    expect(await own.text()).toContain("# TYPE porta_http_requests_total counter");
    expect((await fetch(`http://127.0.0.1:${metricsPort}/other`)).status).toBe(404);

    expect((await fetch(`${porta.url}/metrics`)).status).toBe(404);
    expect((await fetch(`${porta.url}/metrics`, { headers: { authorization: `Bearer ${TOKEN}x` } })).status).toBe(404);
    const main = await fetch(`${porta.url}/metrics`, { headers: { authorization: `Bearer ${TOKEN}` } });
    expect(main.status).toBe(200);
    expect(await main.text()).toContain("porta_provider_pool_size");
  });

  it("counts a password sign-in, a refused one, the code exchange and a client_credentials grant", async () => {
    const user = await createUser(porta.services.db.prisma, tenant.org.id, { password: PASSWORD });
    const before = await scrape();

    const signedIn = await passwordSignIn(tenant, user.email, PASSWORD);
    expect(signedIn.tokens?.access_token).toBeTruthy();
    expect((await passwordSignIn(tenant, user.email, "not the password at all")).status).toBe(401);
    const machine = await createClient(porta.services.db.prisma, tenant.org.id, { grantTypes: ["client_credentials"] });
    const grant = await postForm(`${tenant.issuer}/auth/token`, { grant_type: "client_credentials" }, { authorization: basicAuth(machine.client.id, machine.secret!.value) });
    expect(grant.status).toBe(200);
    const refused = await postForm(`${tenant.issuer}/auth/token`, { grant_type: "client_credentials" }, { authorization: basicAuth(machine.client.id, "wrong") });
    expect(refused.status).toBe(401);

    const after = await scrape();
    const moved = (name: string, labels: Record<string, string>) => sample(after, name, labels) - sample(before, name, labels);
    expect(moved("porta_sign_ins_total", { method: "password", outcome: "success" })).toBe(1);
    expect(moved("porta_sign_ins_total", { method: "password", outcome: "failure", reason: "wrong_password" })).toBe(1);
    expect(moved("porta_audit_events_total", { event: "auth.login.success" })).toBe(1);
    expect(moved("porta_oidc_grants_total", { grant_type: "authorization_code", outcome: "success" })).toBe(1);
    expect(moved("porta_oidc_grants_total", { grant_type: "client_credentials", outcome: "success" })).toBe(1);
    expect(moved("porta_oidc_grants_total", { grant_type: "client_credentials", outcome: "invalid_client" })).toBe(1);
    expect(moved("porta_http_requests_total", { route: "/{slug}/auth/token", method: "POST", status: "200" })).toBe(2);
    expect(moved("porta_http_requests_total", { route: "/interaction/*", method: "POST", status: "401" })).toBe(1);
    expect(moved("porta_db_query_duration_seconds_count", {})).toBeGreaterThan(5);
    expect(sample(after, "porta_provider_pool_size")).toBeGreaterThanOrEqual(1);
    expect(sample(after, "porta_provider_pool_builds_total")).toBeGreaterThanOrEqual(1);
    // The tenant's discovery documents are held (decision 062): filled at start, or made by the sign-in's first request.
    expect(sample(after, "porta_document_directory_entries")).toBeGreaterThanOrEqual(1);
    expect(sample(after, "porta_document_directory_bytes")).toBeGreaterThan(0);
    expect(sample(after, "porta_cache_up", { kind: process.env.REDIS_URL ? "redis" : "memory" })).toBe(1);
    expect(after).toMatch(/^porta_jobs_queued\{queue="magic-link",state="waiting"\} \d+$/m);
    expect(after).toMatch(/^porta_process_resident_memory_bytes \d+/m);
    if (porta.services.db.kind === "postgres") expect(sample(after, "porta_db_pool_connections", { state: "total" })).toBeGreaterThan(0);
  });

  it("has every metric and label the README's operator queries name", async () => {
    const readme = readFileSync(new URL("../../README.md", import.meta.url), "utf8");
    const section = readme.slice(readme.indexOf("### Metrics: sign-ins, lockouts, tokens"), readme.indexOf("## What works today"));
    const queries = [...section.matchAll(/`(sum by [^`]+)`/g)].map((m) => m[1]!);
    expect(queries.length).toBeGreaterThanOrEqual(4);
    const exposed = await scrape();
    for (const query of queries) {
      const metric = /\((porta_[a-z_]+)/.exec(query)![1]!;
      expect(exposed, query).toContain(`# TYPE ${metric} counter`);
      // A counter shows its labels only once counted: its declared label names are the registry's.
      const declared = (porta.services.metrics.registry.getSingleMetric(metric) as unknown as { labelNames: string[] }).labelNames;
      for (const label of /by \(([^)]+)\)/.exec(query)![1]!.split(",").map((l) => l.trim())) expect(declared, `${metric} ${label}`).toContain(label);
    }
  });

  it("counts refusals by a rate limit", async () => {
    const before = sample(await scrape(), "porta_rate_limit_refusals_total", { limit: "passwordLoginIp" });
    const limits = porta.services.limits;
    const key = `metrics-${randomBytes(4).toString("hex")}`;
    let refused = false;
    for (let i = 0; i < 200 && !refused; i += 1) refused = !(await limits.consume("passwordLoginIp", key)).allowed;
    expect(refused).toBe(true);
    expect(sample(await scrape(), "porta_rate_limit_refusals_total", { limit: "passwordLoginIp" }) - before).toBe(1);
  });
});
