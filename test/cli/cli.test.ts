import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync, existsSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { CredentialsFile } from "../../packages/admin-client/src/index";
import { unique } from "../admin/helpers";
import { TEST_ADMIN, startTestPorta, type TestPorta } from "../support/porta";
import { headlessLogin, runPorta, startPorta } from "./helpers";

/**
 * The `porta` command as a child process against a real Porta: headless login through the
 * real login pages, whoami, listings as tables and JSON, an expired access token refreshed
 * without the user noticing, and logout revoking the refresh token at the server.
 */
let porta: TestPorta;
let configDir: string;
let env: Record<string, string>;
const file = () => path.join(configDir, "credentials.json");
const stored = () => (JSON.parse(readFileSync(file(), "utf8")) as CredentialsFile).profiles.default!;

beforeAll(async () => {
  porta = await startTestPorta();
  configDir = mkdtempSync(path.join(tmpdir(), "porta-cli-"));
  env = { PORTA_CONFIG_DIR: configDir };
});
afterAll(async () => {
  await porta?.stop();
  if (configDir) rmSync(configDir, { recursive: true, force: true });
});

describe("porta login --headless", () => {
  it("signs in through the real login pages and stores the tokens in a 0600 file", async () => {
    const run = await headlessLogin(porta, env);
    expect(run.stderr).toContain(`Logged in as ${TEST_ADMIN.email}`);
    expect(run.code).toBe(0);
    expect(statSync(file()).mode & 0o777).toBe(0o600);
    const credentials = stored();
    expect(credentials).toMatchObject({ server: porta.url, clientId: "porta-admin", email: TEST_ADMIN.email });
    expect(credentials.refreshToken).toBeTruthy();
    expect(credentials.expiresAt).toBeGreaterThan(Date.now());
  });

  it("refuses a pasted URL from another login (state mismatch) and keeps no credentials", async () => {
    const other = { PORTA_CONFIG_DIR: mkdtempSync(path.join(tmpdir(), "porta-cli-")) };
    const proc = startPorta(["login", "--headless", "--server", porta.url], other);
    await proc.waitFor(/Paste the URL/);
    proc.write("http://127.0.0.1:8976/callback?code=forged&state=forged\n");
    const run = await proc.done;
    expect(run.code).toBe(1);
    expect(run.stderr).toContain("state_mismatch");
    expect(existsSync(path.join(other.PORTA_CONFIG_DIR, "credentials.json"))).toBe(false);
    rmSync(other.PORTA_CONFIG_DIR, { recursive: true, force: true });
  });
});

describe("with stored credentials", () => {
  it("whoami names the admin, as a table and as JSON", async () => {
    const table = await runPorta(["whoami"], env);
    expect(table.code, table.stderr).toBe(0);
    expect(table.stdout).toMatch(new RegExp(`email\\s+${TEST_ADMIN.email.replace(".", "\\.")}`));
    expect(table.stdout).toContain("service-admin");
    const json = await runPorta(["whoami", "--json"], env);
    expect(JSON.parse(json.stdout)).toMatchObject({ email: TEST_ADMIN.email, roles: ["service-admin"], server: porta.url, profile: "default" });
    const otherProfile = await runPorta(["whoami", "--profile", "staging"], env);
    expect(otherProfile.code).toBe(2);
    expect(otherProfile.stderr).toContain('Not logged in (profile "staging")');
  });

  it("creates and lists organizations as a table and as JSON", async () => {
    const slug = unique("cli");
    const created = await runPorta(["orgs", "create", "--name", "CLI Org", "--slug", slug, "--json"], env);
    expect(created.code, created.stderr).toBe(0);
    const { data: org, etag } = JSON.parse(created.stdout) as { data: { id: string; slug: string }; etag: string };
    expect(org.slug).toBe(slug);
    expect(etag).toMatch(/^"/);

    const table = await runPorta(["orgs", "list", "--q", slug], env);
    expect(table.code, table.stderr).toBe(0);
    const lines = table.stdout.trim().split("\n");
    expect(lines[0]).toMatch(/^ID\s+SLUG\s+NAME\s+STATUS/);
    expect(lines[1]).toMatch(new RegExp(`^${org.id}\\s+${slug}\\s+CLI Org\\s+active`));
    expect(lines[2]).toBe("1 of 1");

    const json = await runPorta(["orgs", "list", "--q", slug, "--json"], env);
    expect(JSON.parse(json.stdout)).toMatchObject({ total: 1, data: [{ id: org.id, slug }] });

    const stale = await runPorta(["orgs", "update", org.id, "--name", "Renamed", "--if-match", etag], env);
    expect(stale.code, stale.stderr).toBe(0);
    const conflict = await runPorta(["orgs", "update", org.id, "--name", "Lost", "--if-match", etag], env);
    expect(conflict.code).toBe(1);
    expect(conflict.stderr).toContain("409 etag_mismatch");
  });

  it("updates a user of an organization with If-Match (users update), and reports the stale ETag", async () => {
    const slug = unique("cliup");
    const org = JSON.parse((await runPorta(["orgs", "create", "--name", "Updates", "--slug", slug, "--json"], env)).stdout) as { data: { id: string } };
    const created = await runPorta(["users", "create", "--org", slug, "--email", `${unique("up")}@example.com`, "--json"], env);
    expect(created.code, created.stderr).toBe(0);
    const { data: user, etag } = JSON.parse(created.stdout) as { data: { id: string }; etag: string };
    const updated = await runPorta(["users", "update", slug, user.id, "--given-name", "Grace", "--if-match", etag, "--json"], env);
    expect(updated.code, updated.stderr).toBe(0);
    expect(JSON.parse(updated.stdout)).toMatchObject({ data: { id: user.id, organizationId: org.data.id, givenName: "Grace" } });
    const stale = await runPorta(["users", "update", slug, user.id, "--given-name", "Lost", "--if-match", etag], env);
    expect(stale.code).toBe(1);
    expect(stale.stderr).toContain("409 etag_mismatch");
  }, 60_000);

  it("invites and lists users of an organization, and reports field errors", async () => {
    const slug = unique("cliu");
    const org = JSON.parse((await runPorta(["orgs", "create", "--name", "Users", "--slug", slug, "--json"], env)).stdout) as { data: { id: string } };
    const email = `${unique("inv")}@example.com`;
    const invited = await runPorta(["users", "invite", "--org", org.data.id, "--email", email, "--json"], env);
    expect(invited.code, invited.stderr).toBe(0);
    expect(JSON.parse(invited.stdout)).toMatchObject({ email });
    const created = await runPorta(["users", "create", "--org", org.data.id, "--email", `${unique("u")}@example.com`, "--given-name", "Grace"], env);
    expect(created.code, created.stderr).toBe(0);
    const list = await runPorta(["users", "list", "--org", org.data.id, "--all"], env);
    expect(list.stdout).toContain("Grace");
    const bad = await runPorta(["users", "create", "--org", org.data.id, "--email", "not-an-email"], env);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain("422 validation_failed");
    expect(bad.stderr).toMatch(/email: /);
  });

  it("lists and rotates one organization's keys, rotates every organization, and lists the audit log", async () => {
    // An organization from the database: its key comes with its first use.
    const org = { data: await porta.services.db.prisma.organization.create({ data: { name: "Keys", slug: unique("clik") } }) };
    const [key, ...more] = await porta.services.keys.list(org.data.id);
    expect(more).toEqual([]);
    expect(key).toMatchObject({ status: "active", organizationId: org.data.id });

    const rotated = await runPorta(["keys", "rotate", "--org", org.data.id, "--json"], env);
    expect(rotated.code, rotated.stderr).toBe(0);
    const fresh = JSON.parse(rotated.stdout) as { kid: string; status: string; organizationId: string };
    expect(fresh).toMatchObject({ status: "active", organizationId: org.data.id });
    expect(fresh.kid).not.toBe(key!.kid);
    const table = await runPorta(["keys", "list", "--org", org.data.id], env);
    expect(table.code, table.stderr).toBe(0);
    expect(table.stdout).toMatch(new RegExp(`${fresh.kid}\\s+active`));
    expect(table.stdout).toMatch(new RegExp(`${key!.kid}\\s+retiring`));

    // Rotating needs an organization, or the explicit rotate-all.
    const bare = await runPorta(["keys", "rotate"], env);
    expect(bare.code).toBe(2);
    expect(bare.stderr).toContain("Missing <orgId>");
    const all = await runPorta(["keys", "rotate-all", "--json"], env);
    expect(all.code, all.stderr).toBe(0);
    expect((JSON.parse(all.stdout) as { rotatedOrganizations: number }).rotatedOrganizations).toBeGreaterThanOrEqual(2);

    const audit = await runPorta(["audit", "list", "--limit", "5", "--json"], env);
    const entries = (JSON.parse(audit.stdout) as { data: Array<{ eventType: string }> }).data;
    expect(entries.map((e) => e.eventType)).toEqual(expect.arrayContaining(["key.rotated", "key.rotated_all"]));
    // By name (decision 039): the organization by its slug, the actor by email; each entry names them.
    const named = await runPorta(["audit", "list", "--organization", org.data.slug, "--actor", TEST_ADMIN.email, "--json"], env);
    expect(named.code, named.stderr).toBe(0);
    const byName = (JSON.parse(named.stdout) as { data: Array<{ eventType: string; names: { organization: { name: string }; actor: { name: string } } }> }).data;
    expect(byName.map((e) => [e.eventType, e.names.organization.name, e.names.actor.name])).toEqual([["key.rotated", "Keys", TEST_ADMIN.email]]);
    const nothing = await runPorta(["audit", "list", "--actor", "nobody@nowhere.example"], env);
    expect(nothing.code).toBe(1);
    expect(nothing.stderr).toContain("422 validation_failed");
    const missing = await runPorta(["clients", "get", "no-such-client"], env);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain("404 not_found");
    // Eight runs of the CLI, each a node process with tsx, on a shared two-core machine.
  }, 120_000);

  it("names an organization by its slug wherever an organization id is asked", async () => {
    const slug = unique("clis");
    const org = JSON.parse((await runPorta(["orgs", "create", "--name", "Slugged", "--slug", slug, "--json"], env)).stdout) as { data: { id: string } };
    // A path value (organizations' own id, users' orgId), a query filter and a body field.
    const shown = await runPorta(["orgs", "get", slug, "--json"], env);
    expect(shown.code, shown.stderr).toBe(0);
    expect(JSON.parse(shown.stdout)).toMatchObject({ data: { id: org.data.id, slug } });
    const invited = await runPorta(["users", "create", "--org", slug, "--email", `${unique("s")}@example.com`, "--json"], env);
    expect(invited.code, invited.stderr).toBe(0);
    expect(JSON.parse(invited.stdout)).toMatchObject({ data: { organizationId: org.data.id } });
    const users = await runPorta(["users", "list", slug, "--json"], env);
    expect(JSON.parse(users.stdout)).toMatchObject({ total: 1 });
    const app = await runPorta(["apps", "create", "--org", slug, "--name", "Slug app", "--json"], env);
    expect(app.code, app.stderr).toBe(0);
    expect(JSON.parse(app.stdout)).toMatchObject({ data: { organizationId: org.data.id } });
    const apps = await runPorta(["apps", "list", "--org", slug, "--json"], env);
    expect((JSON.parse(apps.stdout) as { data: Array<{ name: string }> }).data.map((a) => a.name)).toEqual(["Slug app"]);
    // An id still works as before.
    const byId = await runPorta(["keys", "list", "--org", org.data.id, "--json"], env);
    expect(byId.code, byId.stderr).toBe(0);

    const unknown = await runPorta(["users", "list", "--org", "no-such-organization"], env);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain('No organization has the slug "no-such-organization"');
  }, 60_000);

  it("with --json a server's error is JSON on stdout: status, code, message, details and one request id", async () => {
    const missing = await runPorta(["clients", "get", "no-such-client", "--json"], env);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toBe("");
    const body = JSON.parse(missing.stdout) as { error: { requestId: string } };
    expect(body).toMatchObject({ error: { status: 404, code: "not_found" } });
    expect(body.error.requestId).toMatch(/^[0-9a-f-]{36}$/);
    const invalid = await runPorta(["orgs", "create", "--name", "Bad", "--slug", "Not A Slug", "--json"], env);
    expect(invalid.code).toBe(1);
    expect(JSON.parse(invalid.stdout)).toMatchObject({ error: { status: 422, code: "validation_failed", details: [expect.objectContaining({ field: "slug" })] } });
  });

  it("refreshes an expired access token transparently and stores the rotated tokens (0600)", async () => {
    const before = stored();
    const content = JSON.parse(readFileSync(file(), "utf8")) as CredentialsFile;
    content.profiles.default!.expiresAt = Date.now() - 60_000;
    writeFileSync(file(), JSON.stringify(content), { mode: 0o600 });
    const run = await runPorta(["orgs", "list", "--json"], env);
    expect(run.code, run.stderr).toBe(0);
    expect(JSON.parse(run.stdout).total).toBeGreaterThan(0);
    const after = stored();
    expect(after.accessToken).not.toBe(before.accessToken);
    expect(after.refreshToken).not.toBe(before.refreshToken);
    expect(after.expiresAt).toBeGreaterThan(Date.now());
    expect(statSync(file()).mode & 0o777).toBe(0o600);
  });

  it("logout revokes the refresh token at the server and deletes the file", async () => {
    const { refreshToken, tokenEndpoint } = stored();
    const run = await runPorta(["logout"], env);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stderr).toContain("refresh token is revoked");
    expect(existsSync(file())).toBe(false);
    const refresh = await fetch(tokenEndpoint, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ grant_type: "refresh_token", refresh_token: refreshToken!, client_id: "porta-admin" }).toString(),
    });
    expect(refresh.status).toBe(400);
    expect(await refresh.json()).toMatchObject({ error: "invalid_grant" });
    const after = await runPorta(["orgs", "list", "--server", porta.url], env);
    expect(after.code).toBe(1);
    expect(after.stderr).toContain("Run `porta login`");
  });
});
