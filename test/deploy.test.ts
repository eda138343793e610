import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { parse } from "yaml";
import { EnvSchema, parseConfig } from "~/.server/config/env";
import { PROJECT_ROOT } from "~/.server/root";

/**
 * Running Porta (docs/operations.md): the Dockerfile, compose.yaml and the Helm chart cannot be built or rendered
 * here (no Docker daemon, no helm binary from the reachable registries), so they are checked
 * against the code instead: every variable they set is one Porta reads and accepts, the probes
 * are the paths Porta serves, the ports are the ones it listens on.
 */
const read = (file: string) => readFileSync(path.join(PROJECT_ROOT, file), "utf8");
const KNOWN = new Set(Object.keys(EnvSchema.shape));
const CHART = "deploy/helm/porta";

describe("the Node.js version (decision 063)", () => {
  const pkg = JSON.parse(read("package.json")) as { engines: { node: string }; devDependencies: Record<string, string> };
  const major = /\d+/.exec(pkg.engines.node)![0];

  it("is one major everywhere: engines, the pinned runtime, both image stages, README, compose and the chart", () => {
    expect(pkg.devDependencies.node?.split(".")[0]).toBe(major);
    const bases = [...read("Dockerfile").matchAll(/^FROM node:(\d+)-/gm)].map((m) => m[1]);
    expect(bases).toEqual([major, major]);
    expect(read("README.md")).toContain(`Node.js ${major}`);
    expect(read("compose.yaml")).toContain(`Node.js ${major}`);
    expect(read(`${CHART}/values.yaml`)).toContain(`Node.js ${major}`);
  });

  it("is the one these tests run on", () => {
    expect(process.versions.node.split(".")[0]).toBe(major);
  });
});

describe("the launch line (decision 056)", () => {
  // V8 flags cannot come from NODE_OPTIONS or be set once running, so every launcher names them.
  const launch = /node --liftoff-only scripts\/start\.mjs/;
  it("keeps WebAssembly on V8's baseline compiler in npm start, the image and the chart", () => {
    const pkg = JSON.parse(read("package.json")) as { scripts: Record<string, string> };
    expect(pkg.scripts.start).toMatch(launch);
    expect(pkg.scripts.start).toContain("MALLOC_ARENA_MAX=2");
    expect(read("Dockerfile")).toMatch(/^CMD \["node", "--liftoff-only", "scripts\/start\.mjs"\]$/m);
    expect(read(`${CHART}/templates/deployment.yaml`)).toContain(`command: ["node", "--liftoff-only", "scripts/start.mjs"]`);
    expect(read("docs/operations.md")).toMatch(launch);
  });
});

describe("Dockerfile", () => {
  const dockerfile = read("Dockerfile");
  const runStage = dockerfile.slice(dockerfile.lastIndexOf("\nFROM "));

  it("runs the built server as a non-root user with only DATA_DIR writable", () => {
    expect(runStage).toMatch(/^USER node$/m);
    expect(runStage).toMatch(/^ENV .*DATA_DIR=\/data/m);
    expect(runStage).toMatch(/chown node:node \/data/);
    expect(runStage).toMatch(/--chown=root:root \/app \/app/);
    expect(runStage).toMatch(/^CMD \["node", "--liftoff-only", "scripts\/start\.mjs"\]$/m);
  });

  it("checks liveness on /health/live at the port it exposes, which is Porta's default", () => {
    expect(runStage).toMatch(/^HEALTHCHECK [\s\S]*\/health\/live/m);
    const exposed = Number(/^EXPOSE (\d+)$/m.exec(runStage)?.[1]);
    expect(exposed).toBe(parseConfig({}).port);
  });

  it("records the build's source hash, so that npm start in the image does not build again", () => {
    expect(dockerfile).toMatch(/npm run build/);
    expect(dockerfile).toMatch(/HASH_FILE, m\.sourceHash\('\.'\)/);
  });
});

describe("compose.yaml", () => {
  const compose = parse(read("compose.yaml"), { merge: true }) as { services: Record<string, { environment?: Record<string, string>; command?: string[] }> };

  it("runs two Porta nodes on PostgreSQL and Redis behind a load balancer, migrated first", () => {
    expect(Object.keys(compose.services)).toEqual(expect.arrayContaining(["porta-1", "porta-2", "postgres", "redis", "mailpit", "migrate", "lb"]));
    expect(compose.services.migrate?.command).toEqual(["node", "scripts/migrate.mjs"]);
    const nginx = read("deploy/compose/nginx.conf");
    expect(nginx).toMatch(/server porta-1:3000/);
    expect(nginx).toMatch(/server porta-2:3000/);
  });

  it("sets only variables Porta reads, with values it accepts, and the same ENCRYPTION_KEY on every node", () => {
    for (const name of ["porta-1", "porta-2", "migrate"]) {
      const env = compose.services[name]!.environment!;
      for (const variable of Object.keys(env)) expect(KNOWN, `${name}: ${variable}`).toContain(variable);
      expect(env.ENCRYPTION_KEY).toMatch(/^\$\{ENCRYPTION_KEY:\?/);
    }
    const env = { ...compose.services["porta-1"]!.environment!, ENCRYPTION_KEY: Buffer.alloc(32, 7).toString("base64"), ADMIN_BOOTSTRAP_EMAIL: "admin@example.com", ADMIN_BOOTSTRAP_PASSWORD: "change me at once please" };
    const config = parseConfig(env);
    expect(config.metrics.port).toBe(9464);
    expect(config.trustProxy).toBe(1);
  });
});

describe("Helm chart", () => {
  const values = parse(read(`${CHART}/values.yaml`)) as { env: Record<string, string>; secrets: Record<string, string>; metrics: { port: number }; dataDir: string };
  const templates = Object.fromEntries(readdirSync(path.join(PROJECT_ROOT, CHART, "templates")).map((file) => [file, read(`${CHART}/templates/${file}`)]));

  it("has the parts docs/operations.md names: Deployment with probes, PodDisruptionBudget, HPA, ServiceMonitor, migration Job, Secret", () => {
    const kinds = Object.values(templates).flatMap((text) => [...text.matchAll(/^kind: (\w+)$/gm)].map((m) => m[1]));
    expect(kinds.sort()).toEqual(["Deployment", "HorizontalPodAutoscaler", "Job", "PodDisruptionBudget", "Secret", "Service", "ServiceMonitor"]);
  });

  it("probes the paths Porta serves, on the port it listens on", () => {
    const deployment = templates["deployment.yaml"]!;
    expect(deployment).toMatch(/livenessProbe:\s+httpGet: \{ path: \/health\/live, port: http \}/);
    expect(deployment).toMatch(/readinessProbe:\s+httpGet: \{ path: \/health\/ready, port: http \}/);
    expect(deployment).toMatch(/startupProbe:\s+httpGet: \{ path: \/health\/live, port: http \}/);
    expect(deployment).toMatch(/containerPort: 3000/);
    expect(templates["_helpers.tpl"]).toMatch(/- name: PORT\n {2}value: "3000"/);
    expect(templates["servicemonitor.yaml"]).toMatch(/path: \/metrics/);
  });

  it("sets only variables Porta reads, and the values' defaults parse", () => {
    const named = [...templates["_helpers.tpl"]!.matchAll(/- name: ([A-Z_]+)/g)].map((m) => m[1]!);
    const all = [...named, ...Object.keys(values.env), ...Object.keys(values.secrets)];
    for (const variable of all) expect(KNOWN, variable).toContain(variable);
    const plain = Object.fromEntries(Object.entries(values.env).filter(([, v]) => v !== ""));
    const config = parseConfig({ ...plain, PORT: "3000", METRICS_PORT: String(values.metrics.port), DATA_DIR: values.dataDir, BASE_URL: "https://id.example.com" });
    expect(config.shutdownDelayMs).toBeGreaterThan(0);
  });

  it("keeps the drain inside the termination grace period and runs the migrations before a rollout", () => {
    const grace = Number(parse(read(`${CHART}/values.yaml`)).terminationGracePeriodSeconds);
    expect(grace).toBeGreaterThan(Number(values.env.SHUTDOWN_DELAY_SECONDS) + 10);
    expect(templates["migration-job.yaml"]).toMatch(/"helm.sh\/hook": pre-install,pre-upgrade/);
    expect(templates["migration-job.yaml"]).toMatch(/command: \["node", "scripts\/migrate\.mjs"\]/);
    expect(templates["deployment.yaml"]).toMatch(/runAsNonRoot: true/);
  });
});
