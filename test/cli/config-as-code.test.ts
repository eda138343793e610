import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PortaAdmin, staticToken } from "../../packages/admin-client/src/index";
import { applyPlans, ApplyStoppedError } from "../../packages/cli/src/config-as-code/apply";
import { loadConfig } from "../../packages/cli/src/config-as-code/load";
import { planOrganization } from "../../packages/cli/src/config-as-code/plan";
import { readOrganization } from "../../packages/cli/src/config-as-code/state";
import { unique } from "../admin/helpers";
import { obtainAdminTokens } from "../support/admin-api";
import { startTestPorta, type TestPorta } from "../support/porta";
import { runPorta } from "./helpers";

/**
 * `porta plan`, `porta apply` and `porta export` as child processes against real Portas: a file
 * applied twice changes nothing the second time; plan shows field-by-field changes and what
 * --prune would delete; a missing secret variable stops before any change; an entity changed
 * after the plan read it stops apply with its name; and an export applied to an empty Porta
 * reproduces the organization (its export there is the same file).
 */
let source: TestPorta;
let target: TestPorta;
let sourceToken: string;
let targetToken: string;
let dir: string;

const GOOGLE_SECRET = "google-upstream-secret-value";

beforeAll(async () => {
  [source, target] = await Promise.all([startTestPorta(), startTestPorta()]);
  const [sourceTokens, targetTokens] = await Promise.all([obtainAdminTokens(source), obtainAdminTokens(target)]);
  sourceToken = sourceTokens.accessToken;
  targetToken = targetTokens.accessToken;
  dir = mkdtempSync(path.join(tmpdir(), "porta-config-"));
}, 120_000);
afterAll(async () => {
  await Promise.all([source?.stop(), target?.stop()]);
  if (dir) rmSync(dir, { recursive: true, force: true });
});

const envFor = (porta: TestPorta, token: string, extra: Record<string, string> = {}) => ({ PORTA_CONFIG_DIR: dir, PORTA_TOKEN: token, PORTA_SERVER: porta.url, ...extra });
const sourceEnv = (extra: Record<string, string> = {}) => envFor(source, sourceToken, { ACME_GOOGLE_SECRET: GOOGLE_SECRET, ...extra });

function configFile(slug: string, options: { webhooks?: boolean; twoFactorPolicy?: string; redirect?: string } = {}) {
  return `# yaml-language-server: $schema=../docs/porta-config.schema.json
version: 1
organizations:
  - slug: ${slug}
    name: Acme Config
    defaultLoginMethods: [password, passkey]
    twoFactorPolicy: ${options.twoFactorPolicy ?? "optional"}
    defaultLocale: de
    branding:
      displayName: Acme
      primaryColor: "#0055aa"
    permissions:
      - name: invoices:read
        description: Read invoices
      - name: invoices:write
    roles:
      - name: Accountant
        description: Books
        permissions: [invoices:read, invoices:write]
      - name: Viewer
        permissions: [invoices:read]
    applications:
      - name: Portal
        description: Customer portal
        claims:
          - { claimName: tier, claimType: string, scope: profile, description: Plan tier }
      - name: Legacy
        status: inactive
    clients:
      - name: Portal Web
        application: Portal
        clientType: confidential
        redirectUris: ["${options.redirect ?? "https://portal.example.com/cb"}"]
        grantTypes: [authorization_code, refresh_token]
        scope: openid profile email
        loginMethods: [password]
        pkce: required
      - name: Portal CLI
        application: Portal
        clientType: public
        applicationType: native
        redirectUris: ["http://127.0.0.1/callback"]
        status: inactive
    identityProviders:
      - name: Google
        kind: google
        clientId: google-client-id
        clientSecret: { fromEnv: ACME_GOOGLE_SECRET }
        domains: [acme-config.example]
    ${
      options.webhooks === false
        ? "webhooks: []"
        : `webhooks:
      - url: https://hooks.example.com/porta
        description: Audit sink
        eventTypes: ["user.*"]`
    }
`;
}

function write(name: string, text: string) {
  const file = path.join(dir, name);
  writeFileSync(file, text);
  return file;
}

interface PlanJson {
  organizations: Array<{ slug: string; changes: Array<{ action: string; kind: string; key: string; fields: Array<{ field: string; from: unknown; to: unknown }> }>; prunable: Array<{ kind: string; key: string }> }>;
  summary: { create: number; update: number; delete: number };
}

describe("porta apply", () => {
  it("creates an organization's configuration, and applying the same file again changes nothing", async () => {
    const slug = unique("cfg");
    const file = write(`${slug}.yaml`, configFile(slug));
    const secretsOut = path.join(dir, `${slug}-secrets.jsonl`);

    const first = await runPorta(["apply", "-f", file, "--secrets-out", secretsOut], sourceEnv());
    expect(first.code, first.stderr).toBe(0);
    expect(first.stdout).toContain(`organization "${slug}":`);
    expect(first.stdout).toContain('+ create client "Portal Web"');
    expect(first.stdout).toContain('clientSecret: "$ACME_GOOGLE_SECRET"');
    expect(first.stdout).toMatch(/Plan: 1[0-9] to create, 1 to update, 0 to delete\./);
    expect(first.stderr).toContain("Apply complete");
    // The upstream secret came from the environment and is printed nowhere; the confidential
    // client's and the webhook's new secrets went only to the --secrets-out file.
    expect(`${first.stdout}${first.stderr}`).not.toContain(GOOGLE_SECRET);
    const issued = readFileSync(secretsOut, "utf8")
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line) as { kind: string; key: string; secret: string });
    expect(issued.map((s) => `${s.kind} ${s.key}`).sort()).toEqual(["client Portal Web", "webhook https://hooks.example.com/porta"]);
    expect(statSync(secretsOut).mode & 0o777).toBe(0o600);
    for (const s of issued) expect(`${first.stdout}${first.stderr}`).not.toContain(s.secret);

    // What the server has now, read back through the Admin API.
    const admin = new PortaAdmin({ baseUrl: source.url, auth: staticToken(sourceToken) });
    const state = (await readOrganization(admin, slug))!;
    expect(state.organization.data).toMatchObject({ name: "Acme Config", twoFactorPolicy: "optional", defaultLocale: "de" });
    expect(state.branding.data).toMatchObject({ displayName: "Acme", primaryColor: "#0055aa" });
    expect(state.roles.find((r) => r.data.name === "Accountant")!.data.permissions.map((p) => p.name).sort()).toEqual(["invoices:read", "invoices:write"]);
    const portal = state.applications.find((a) => a.data.name === "Portal")!;
    expect(portal.claims.map((c) => c.claimName)).toEqual(["tier"]);
    expect(state.applications.find((a) => a.data.name === "Legacy")!.data.status).toBe("inactive");
    const web = state.clients.find((c) => c.data.name === "Portal Web")!.data;
    expect(web).toMatchObject({ applicationId: portal.data.id, clientType: "confidential", loginMethods: ["password"], pkce: "required", status: "active" });
    expect(state.clients.find((c) => c.data.name === "Portal CLI")!.data).toMatchObject({ clientType: "public", status: "inactive" });
    expect(state.identityProviders[0]!.data).toMatchObject({ name: "Google", hasClientSecret: true, domains: ["acme-config.example"] });

    const second = await runPorta(["apply", "-f", file], sourceEnv());
    expect(second.code, second.stderr).toBe(0);
    expect(second.stdout).toContain("no changes");
    expect(second.stdout).toContain("Plan: 0 to create, 0 to update, 0 to delete.");
    expect(second.stderr).toContain("No changes: the server already matches the file.");
    const plan = await runPorta(["plan", "-f", file, "--json"], sourceEnv());
    expect((JSON.parse(plan.stdout) as PlanJson).summary).toEqual({ create: 0, update: 0, delete: 0 });
  }, 120_000);

  it("plans field by field, deletes nothing without --prune, and deletes what the file dropped with it", async () => {
    const slug = unique("cfgp");
    const file = write(`${slug}.yaml`, configFile(slug));
    expect((await runPorta(["apply", "-f", file], sourceEnv())).code).toBe(0);

    const changed = write(`${slug}-2.yaml`, configFile(slug, { webhooks: false, twoFactorPolicy: "required_totp", redirect: "https://portal.example.com/callback" }));
    const plan = await runPorta(["plan", "-f", changed], sourceEnv());
    expect(plan.code, plan.stderr).toBe(0);
    expect(plan.stdout).toContain(`~ update organization "${slug}"`);
    expect(plan.stdout).toContain('twoFactorPolicy: "optional" → "required_totp"');
    expect(plan.stdout).toContain('~ update client "Portal Web"');
    expect(plan.stdout).toContain('redirectUris: ["https://portal.example.com/cb"] → ["https://portal.example.com/callback"]');
    expect(plan.stdout).toContain("--prune would delete them");
    expect(plan.stdout).toContain('- webhook "https://hooks.example.com/porta"');
    expect(plan.stdout).toContain("Plan: 0 to create, 2 to update, 0 to delete.");

    const withoutPrune = await runPorta(["apply", "-f", changed], sourceEnv());
    expect(withoutPrune.code, withoutPrune.stderr).toBe(0);
    const admin = new PortaAdmin({ baseUrl: source.url, auth: staticToken(sourceToken) });
    expect((await readOrganization(admin, slug))!.webhooks).toHaveLength(1);

    const pruned = await runPorta(["apply", "-f", changed, "--prune", "--json"], sourceEnv());
    expect(pruned.code, pruned.stderr).toBe(0);
    const result = JSON.parse(pruned.stdout) as PlanJson & { applied: number };
    expect(result.summary).toEqual({ create: 0, update: 0, delete: 1 });
    expect(result.applied).toBe(1);
    const after = (await readOrganization(admin, slug))!;
    expect(after.webhooks).toEqual([]);
    expect(after.organization.data.twoFactorPolicy).toBe("required_totp");
  }, 120_000);

  it("stops before reading or writing anything when a secret's variable is missing", async () => {
    const slug = unique("cfgm");
    const file = write(`${slug}.yaml`, configFile(slug));
    const run = await runPorta(["apply", "-f", file], envFor(source, sourceToken));
    expect(run.code).toBe(2);
    expect(run.stderr).toContain("names secrets in environment variables that are not set: ACME_GOOGLE_SECRET. Nothing was changed.");
    const admin = new PortaAdmin({ baseUrl: source.url, auth: staticToken(sourceToken) });
    expect(await readOrganization(admin, slug)).toBeUndefined();
  });

  it("refuses a plan that names what does not exist, and stops at a write the server refuses with its field details", async () => {
    const slug = unique("cfgr");
    const dangling = write(`${slug}.yaml`, `version: 1\norganizations:\n  - slug: ${slug}\n    name: Dangling\n    roles:\n      - { name: Auditor, permissions: [audit:read] }\n`);
    const plan = await runPorta(["plan", "-f", dangling], sourceEnv());
    expect(plan.code).toBe(1);
    expect(plan.stdout).toContain(`error: ${slug}: role "Auditor" names the permission "audit:read", which the organization would not have.`);
    const refused = await runPorta(["apply", "-f", dangling], sourceEnv());
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain("nothing was changed");
    const admin = new PortaAdmin({ baseUrl: source.url, auth: staticToken(sourceToken) });
    expect(await readOrganization(admin, slug)).toBeUndefined();

    const badHook = write(
      `${slug}-hook.yaml`,
      `version: 1\norganizations:\n  - slug: ${slug}\n    name: Hooks\n    webhooks:\n      - { url: "https://hooks.example.com/x", eventTypes: [user.exploded] }\n`,
    );
    const stopped = await runPorta(["apply", "-f", badHook], sourceEnv());
    expect(stopped.code).toBe(1);
    expect(stopped.stderr).toContain(`Could not create webhook "https://hooks.example.com/x" of organization "${slug}": 422 validation_failed`);
    expect(stopped.stderr).toContain("Apply stopped; 1 change(s) were made before it.");
    expect(stopped.stderr).toMatch(/eventTypes\.0: is not an audit event type/);
    // The organization, written before the refusal, stays; the next plan shows only the webhook.
    const next = JSON.parse((await runPorta(["plan", "-f", badHook, "--json"], sourceEnv())).stdout) as PlanJson;
    expect(next.summary).toEqual({ create: 1, update: 0, delete: 0 });
  }, 120_000);

  it("stops at an entity someone changed after the plan read it, naming it (If-Match)", async () => {
    const slug = unique("cfge");
    const file = write(`${slug}.yaml`, configFile(slug));
    expect((await runPorta(["apply", "-f", file], sourceEnv())).code).toBe(0);

    const admin = new PortaAdmin({ baseUrl: source.url, auth: staticToken(sourceToken) });
    const loaded = loadConfig(write(`${slug}-2.yaml`, configFile(slug, { twoFactorPolicy: "required_any", redirect: "https://portal.example.com/other" })), { ACME_GOOGLE_SECRET: GOOGLE_SECRET });
    const state = await readOrganization(admin, slug);
    const plan = planOrganization(loaded.config.organizations[0]!, state, loaded.secrets);
    expect(plan.changes.map((c) => c.kind)).toEqual(["organization", "client"]);

    // Someone renames the organization between the plan and the apply.
    const current = await admin.organizations.get(state!.organization.data.id);
    await admin.organizations.update(current.data.id, { name: "Renamed meanwhile" }, { ifMatch: current.etag });

    const error = await applyPlans(admin, [{ slug, state, plan }], { prune: false, secrets: loaded.secrets }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ApplyStoppedError);
    expect((error as ApplyStoppedError).message).toContain(`organization "${slug}" changed since it was read for this plan (the server refused the write: 409 etag_mismatch)`);
    expect((error as ApplyStoppedError).message).toContain("0 change(s) were made before it");
    // Nothing after it was written: the client keeps its redirect URI, the name its new value.
    const after = (await readOrganization(admin, slug))!;
    expect(after.organization.data).toMatchObject({ name: "Renamed meanwhile", twoFactorPolicy: "optional" });
    expect(after.clients.find((c) => c.data.name === "Portal Web")!.data.redirectUris).toEqual(["https://portal.example.com/cb"]);
  }, 120_000);

  it("as a command: a change made between the plan's read and the write stops apply with exit 1, naming the entity", async () => {
    const slug = unique("cfgc");
    expect((await runPorta(["apply", "-f", write(`${slug}.yaml`, configFile(slug))], sourceEnv())).code).toBe(0);
    const admin = new PortaAdmin({ baseUrl: source.url, auth: staticToken(sourceToken) });

    // A proxy in front of the server: just before apply's first write reaches it, someone else
    // changes the same client, as a colleague in the console would.
    let interfered = false;
    const proxy = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on("data", (c: Buffer) => chunks.push(c));
      req.on("end", async () => {
        if (req.method === "PUT" && req.url?.startsWith("/api/admin/clients/") && !interfered) {
          interfered = true;
          const id = req.url.split("/")[4]!;
          const current = await admin.clients.get(id);
          await admin.clients.update(id, { skipConsent: true }, { ifMatch: current.etag });
        }
        const headers = Object.fromEntries(["authorization", "content-type", "if-match", "accept", "user-agent"].flatMap((h) => (req.headers[h] ? [[h, String(req.headers[h])]] : [])));
        const answer = await fetch(`${source.url}${req.url}`, { method: req.method, headers, ...(chunks.length > 0 ? { body: Buffer.concat(chunks) } : {}) });
        res.writeHead(answer.status, Object.fromEntries(["content-type", "etag", "x-request-id"].flatMap((h) => (answer.headers.get(h) ? [[h, answer.headers.get(h)!]] : []))));
        res.end(Buffer.from(await answer.arrayBuffer()));
      });
    });
    await new Promise<void>((resolve) => proxy.listen(0, "127.0.0.1", resolve));
    try {
      const changed = write(`${slug}-2.yaml`, configFile(slug, { redirect: "https://portal.example.com/moved" }));
      const run = await runPorta(["apply", "-f", changed], sourceEnv({ PORTA_SERVER: `http://127.0.0.1:${(proxy.address() as AddressInfo).port}` }));
      expect(interfered).toBe(true);
      expect(run.code).toBe(1);
      expect(run.stderr).toContain(`Error: client "Portal Web" of organization "${slug}" changed since it was read for this plan (the server refused the write: 409 etag_mismatch). Apply stopped; 0 change(s) were made before it.`);
    } finally {
      await new Promise((resolve) => proxy.close(resolve));
    }
    const web = (await readOrganization(admin, slug))!.clients.find((c) => c.data.name === "Portal Web")!.data;
    expect(web).toMatchObject({ skipConsent: true, redirectUris: ["https://portal.example.com/cb"] });
  }, 120_000);
});

describe("porta export", () => {
  it("writes the configuration with secrets as variable names; applied to an empty Porta it reproduces the organization", async () => {
    const slug = unique("cfgx");
    expect((await runPorta(["apply", "-f", write(`${slug}.yaml`, configFile(slug))], sourceEnv())).code).toBe(0);

    const exported = await runPorta(["export", "--org", slug, "--format", "yaml"], sourceEnv());
    expect(exported.code, exported.stderr).toBe(0);
    const variable = `PORTA_${slug.toUpperCase().replace(/-/g, "_")}_GOOGLE_CLIENT_SECRET`;
    expect(exported.stdout).toContain(`fromEnv: ${variable}`);
    expect(exported.stdout).not.toContain(GOOGLE_SECRET);
    expect(exported.stdout).toContain("name: Portal Web");
    const exportFile = write(`${slug}-export.yaml`, exported.stdout);
    // The export plans no change against the Porta it came from.
    const same = await runPorta(["plan", "-f", exportFile, "--json"], sourceEnv({ [variable]: GOOGLE_SECRET }));
    expect((JSON.parse(same.stdout) as PlanJson).summary).toEqual({ create: 0, update: 0, delete: 0 });

    const applied = await runPorta(["apply", "-f", exportFile], envFor(target, targetToken, { [variable]: GOOGLE_SECRET }));
    expect(applied.code, applied.stderr).toBe(0);
    expect(applied.stdout).toContain(`+ create organization "${slug}"`);

    const again = await runPorta(["export", "--org", slug, "--format", "yaml"], envFor(target, targetToken));
    expect(again.code, again.stderr).toBe(0);
    expect(again.stdout).toBe(exported.stdout);
    const twice = await runPorta(["plan", "-f", exportFile, "--json"], envFor(target, targetToken, { [variable]: GOOGLE_SECRET }));
    expect((JSON.parse(twice.stdout) as PlanJson).summary).toEqual({ create: 0, update: 0, delete: 0 });
  }, 120_000);

  it("asks for the organization and refuses an unknown one", async () => {
    const none = await runPorta(["export", "--format", "yaml"], sourceEnv());
    expect(none.code).toBe(2);
    expect(none.stderr).toContain("Which organization?");
    const unknown = await runPorta(["export", "--org", "no-such-org-here"], sourceEnv());
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain('No organization has the slug "no-such-org-here"');
  });
});
