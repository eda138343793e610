import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runPorta } from "./helpers";

/**
 * `porta` as a person meets it before anything works: help that exits 0, an operation's fields
 * with their types from the OpenAPI document, "did you mean" for a typo, errors as JSON under
 * --json, and a server that cannot be reached named with the reason. No Porta is needed: the
 * unreachable servers are a closed port, the reserved `.invalid` domain and a plain HTTP port
 * behind an https:// URL.
 */
const env = { PORTA_CONFIG_DIR: "/nonexistent/porta-cli-usage" };
const withToken = { ...env, PORTA_TOKEN: "not-a-real-token" };

let plain: Server;
let plainPort: number;
let closedPort: number;
beforeAll(async () => {
  plain = createServer((_req, res) => res.end("{}"));
  const closed = createServer();
  await Promise.all([plain, closed].map((s) => new Promise<void>((resolve) => s.listen(0, "127.0.0.1", resolve))));
  plainPort = (plain.address() as AddressInfo).port;
  closedPort = (closed.address() as AddressInfo).port;
  await new Promise((resolve) => closed.close(resolve));
});
afterAll(async () => {
  await new Promise((resolve) => plain?.close(resolve));
});

describe("help", () => {
  it("`porta --help`, `porta help` and `-h` print the overview and exit 0; a bare `porta` is a usage error", async () => {
    for (const args of [["--help"], ["help"], ["-h"]]) {
      const run = await runPorta(args, env);
      expect(run.code, args.join(" ")).toBe(0);
      expect(run.stderr).toContain("porta: manage Porta from the command line");
      expect(run.stderr).toContain("porta <area> <operation> --help");
    }
    const bare = await runPorta([], env);
    expect(bare.code).toBe(2);
    expect(bare.stderr).toContain("porta: manage Porta from the command line");
  });

  it("an operation's --help lists its fields with their types, which are required and the defaults", async () => {
    const run = await runPorta(["clients", "create", "--help"], env);
    expect(run.code, run.stderr).toBe(0);
    const lines = run.stderr.split("\n");
    const line = (flag: string) => lines.find((l) => l.trimStart().startsWith(flag)) ?? `(no line for ${flag})`;
    expect(lines[0]).toBe("porta clients create [--field value… | --data JSON]");
    expect(lines[1]).toContain("Create a client");
    expect(line("--name")).toMatch(/^\s+--name\s+string \(1–200 chars\)\s+required$/);
    expect(line("--client-type")).toMatch(/\sconfidential \| public\s+required$/);
    expect(line("--application-type")).toMatch(/\sweb \| native\s+default "web"$/);
    expect(line("--redirect-uris")).toMatch(/\slist of string\s+default \[\]$/);
    expect(line("--scope")).not.toContain("required");
    expect(line("--organization-id")).toMatch(/^\s+--organization-id, --org, --org-id\s+id \(uuid\) or slug\s+required$/);
    expect(run.stderr).toContain("An organization is named by its id or its slug.");

    // `porta help <area> <operation>` is the same text; path values show as positionals.
    const same = await runPorta(["help", "clients", "create"], env);
    expect(same).toEqual(run);
    const users = await runPorta(["users", "list", "-h"], env);
    expect(users.code).toBe(0);
    expect(users.stderr).toMatch(/^\s+<orgId>, --org-id, --org\s+id \(uuid\) or slug\s+required$/m);
    expect(users.stderr).toMatch(/^\s+--status\s+active \| inactive$/m);
  });

  it("an area's --help lists its operations with their usage and summary", async () => {
    const run = await runPorta(["orgs", "--help"], env);
    expect(run.code).toBe(0);
    expect(run.stderr).toMatch(/^\s+porta organizations get <id>\s+Get an organization$/m);
    expect(run.stderr).toMatch(/^\s+porta organizations validate-slug \[--param value…\]\s+Check whether a slug/m);
  });
});

describe("did you mean", () => {
  it("suggests the nearest area, operation or flag, and nothing for a word near none", async () => {
    const area = await runPorta(["orgz", "list"], env);
    expect(area.code).toBe(2);
    expect(area.stderr.trim()).toBe("Unknown command `porta orgz`. Did you mean `porta orgs`? `porta help` lists the commands.");
    const builtin = await runPorta(["whoamii"], env);
    expect(builtin.stderr).toContain("Did you mean `porta whoami`?");
    const operation = await runPorta(["users", "lsit", "--org", "acme"], env);
    expect(operation.code).toBe(2);
    expect(operation.stderr.trim()).toBe("`porta users` has no operation `lsit`. Did you mean `porta users list`? `porta users --help` lists them.");
    const kebab = await runPorta(["keys", "rotate-al"], env);
    expect(kebab.stderr).toContain("Did you mean `porta keys rotate-all`?");
    const flag = await runPorta(["orgs", "create", "--nme", "Acme", "--slug", "acme"], withToken);
    expect(flag.code).toBe(2);
    expect(flag.stderr.trim()).toBe("Unknown flag --nme for `porta orgs create`. Did you mean `--name`? `porta orgs create --help` lists its fields.");
    const nothing = await runPorta(["xyzzy"], env);
    expect(nothing.code).toBe(2);
    expect(nothing.stderr.trim()).toBe("Unknown command `porta xyzzy`. `porta help` lists the commands.");
  });
});

describe("errors with --json", () => {
  it("a usage error is one JSON object on stdout, nothing on stderr, exit 2", async () => {
    const run = await runPorta(["orgs", "lsit", "--json"], env);
    expect(run.code).toBe(2);
    expect(run.stderr).toBe("");
    expect(JSON.parse(run.stdout)).toEqual({ error: { code: "usage", message: "`porta orgs` has no operation `lsit`. Did you mean `porta orgs list`? `porta orgs --help` lists them." } });
  });

  it("not being signed in is JSON too", async () => {
    const run = await runPorta(["orgs", "list", "--json", "--server", `http://127.0.0.1:${closedPort}`], env);
    expect(run.code).toBe(1);
    expect(JSON.parse(run.stdout)).toMatchObject({ error: { status: 401, code: "not_logged_in" } });
  });
});

describe("a server that cannot be reached", () => {
  it("refused: names the URL and the reason, as text and as JSON", async () => {
    const server = `http://127.0.0.1:${closedPort}`;
    const run = await runPorta(["orgs", "list", "--server", server], withToken);
    expect(run.code).toBe(1);
    expect(run.stderr.trim()).toBe(`Error: Could not reach ${server}/api/admin/organizations: the connection was refused: nothing listens there (is Porta running, and is the port right?) (ECONNREFUSED).`);
    const json = await runPorta(["orgs", "list", "--server", server, "--json"], withToken);
    expect(json.code).toBe(1);
    expect(JSON.parse(json.stdout)).toEqual({
      error: {
        code: "connection_refused",
        message: expect.stringContaining(`Could not reach ${server}/api/admin/organizations`) as unknown,
        url: `${server}/api/admin/organizations`,
        reason: "refused",
        systemCode: "ECONNREFUSED",
      },
    });
  });

  it("DNS: names the host that was not found", async () => {
    const run = await runPorta(["orgs", "list", "--server", "https://porta.example.invalid"], withToken);
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(/^Error: Could not reach https:\/\/porta\.example\.invalid\/api\/admin\/organizations: the host name porta\.example\.invalid (was not found in DNS \(ENOTFOUND\)|could not be looked up)/);
  });

  it("TLS: an https:// URL on a port that speaks plain HTTP", async () => {
    const run = await runPorta(["orgs", "list", "--server", `https://127.0.0.1:${plainPort}`], withToken);
    expect(run.code).toBe(1);
    expect(run.stderr).toContain(`Error: Could not reach https://127.0.0.1:${plainPort}/api/admin/organizations: the TLS handshake failed: the server does not speak TLS on that port (is the URL http://?)`);
  });

  it("`porta login` says which URL failed too", async () => {
    const server = `http://127.0.0.1:${closedPort}`;
    const run = await runPorta(["login", "--headless", "--server", server], env);
    expect(run.code).toBe(1);
    expect(run.stderr).toContain(`Error: Could not reach ${server}/api/admin/metadata: the connection was refused`);
  });

  it("a server that is not a URL is a usage error", async () => {
    const run = await runPorta(["orgs", "list", "--server", "porta.example.com"], withToken);
    expect(run.code).toBe(2);
    expect(run.stderr.trim()).toBe('The server must be an http:// or https:// URL (got "porta.example.com").');
  });
});
