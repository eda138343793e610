import { execFileSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { createServer, request as httpRequest, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { signInAsAdmin } from "../support/admin-api";
import { freePort, spawnServer, startPrivatePostgres, waitForHealth, type PostgresServer, type ServerProcess } from "../support/process";

/**
 * The operations recipe of docs/operations.md, performed: two Porta processes on one
 * PostgreSQL, with one ENCRYPTION_KEY, behind a load balancer that sends each request to the
 * next node (no sticky sessions), serve one administrator's sign-in across both; then the backup
 * and restore drill: dump, wipe, restore, start, sign in, and the data is there.
 * The database is a private PostgreSQL server of this test (the shared one is never wiped).
 */
const ADMIN = { email: "ops-admin@porta.test", password: "correct horse battery staple 99" };

/** Round robin over the nodes, as a load balancer without session affinity does. */
function roundRobin(ports: number[]): Promise<{ port: number; served: number[]; close(): Promise<void> }> {
  const served = ports.map(() => 0);
  let next = 0;
  const server: Server = createServer((req, res) => {
    const index = next++ % ports.length;
    served[index]!++;
    const upstream = httpRequest(
      { host: "127.0.0.1", port: ports[index], method: req.method, path: req.url, headers: { ...req.headers, "x-forwarded-for": req.socket.remoteAddress ?? "127.0.0.1" } },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    upstream.on("error", () => {
      res.writeHead(502);
      res.end();
    });
    req.pipe(upstream);
  });
  return new Promise((resolve) =>
    server.listen(0, () => resolve({ port: (server.address() as AddressInfo).port, served, close: () => new Promise((done) => server.close(() => done())) })),
  );
}

const psql = (url: string, sql: string) => execFileSync("psql", [url, "-v", "ON_ERROR_STOP=1", "-q", "-c", sql], { encoding: "utf8" });

describe("scale-out and restore drill (docs/operations.md)", () => {
  const name = "porta_ops";
  let postgres: PostgresServer | undefined;
  let base = "";
  let dbUrl = "";
  const encryptionKey = randomBytes(32).toString("base64");
  const dirs: string[] = [];
  const servers: ServerProcess[] = [];

  afterAll(async () => {
    for (const server of servers) server.kill("SIGKILL");
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
    await postgres?.dispose();
  }, 60_000);

  async function startNode(port: number, baseUrl: string): Promise<ServerProcess> {
    const dataDir = mkdtempSync(path.join(tmpdir(), "porta-ops-"));
    dirs.push(dataDir);
    const server = spawnServer({
      NODE_ENV: "production",
      PORT: String(port),
      BASE_URL: baseUrl,
      DATA_DIR: dataDir,
      DATABASE_URL: dbUrl,
      ENCRYPTION_KEY: encryptionKey,
      ADMIN_BOOTSTRAP_EMAIL: ADMIN.email,
      ADMIN_BOOTSTRAP_PASSWORD: ADMIN.password,
      TRUST_PROXY: "loopback",
      LOG_LEVEL: "warn",
    });
    servers.push(server);
    expect((await waitForHealth(`http://127.0.0.1:${port}`, server, 180_000)).status).toBe(200);
    return server;
  }

  it("serves one sign-in across two nodes without sticky sessions, then survives dump, wipe and restore", { timeout: 600_000 }, async () => {
    postgres = await startPrivatePostgres();
    base = postgres.url;
    const url = new URL(base);
    url.pathname = `/${name}`;
    dbUrl = url.toString();
    psql(base, `CREATE DATABASE ${name}`);
    const [portA, portB] = [await freePort(), await freePort()];
    // The load balancer's address is the public one; it is known before the nodes start.
    const lb = await roundRobin([portA, portB]);
    const publicUrl = `http://localhost:${lb.port}`;
    await startNode(portA, publicUrl);
    await startNode(portB, publicUrl);

    const { accessToken } = await signInAsAdmin(`${publicUrl}/porta-admin`, ADMIN);
    // Every step of the sign-in (discovery, authorize, login page, POST, consent, token) took turns.
    expect(lb.served[0]).toBeGreaterThan(2);
    expect(lb.served[1]).toBeGreaterThan(2);
    const api = (method: string, route: string, body?: unknown) =>
      fetch(`${publicUrl}/api/admin${route}`, {
        method,
        headers: { authorization: `Bearer ${accessToken}`, ...(body ? { "content-type": "application/json" } : {}) },
        ...(body ? { body: JSON.stringify(body) } : {}),
      });
    const created = await api("POST", "/organizations", { name: "Drill Org", slug: "drill-org" });
    expect(created.status).toBe(201);
    // The token works on either node, and what one node wrote the other reads.
    for (let i = 0; i < 4; i++) expect((await api("GET", "/organizations?q=drill")).status).toBe(200);

    // Backup: a logical dump while the nodes run.
    const dump = path.join(mkdtempSync(path.join(tmpdir(), "porta-dump-")), "porta.dump");
    dirs.push(path.dirname(dump));
    execFileSync("pg_dump", ["--format=custom", "--file", dump, dbUrl]);

    // Disaster: the nodes stop and the database is lost.
    for (const server of servers.splice(0)) server.kill("SIGTERM");
    await lb.close();
    psql(base, `DROP DATABASE ${name} WITH (FORCE)`);
    psql(base, `CREATE DATABASE ${name}`);

    // Restore, start one node with the same ENCRYPTION_KEY, sign in: everything is there.
    execFileSync("pg_restore", ["--no-owner", "--exit-on-error", "--dbname", dbUrl, dump]);
    const portC = await freePort();
    await startNode(portC, `http://localhost:${portC}`);
    const again = await signInAsAdmin(`http://localhost:${portC}/porta-admin`, ADMIN);
    const list = await fetch(`http://localhost:${portC}/api/admin/organizations?q=drill`, { headers: { authorization: `Bearer ${again.accessToken}` } });
    expect(list.status).toBe(200);
    const body = (await list.json()) as { data: Array<{ slug: string }> };
    expect(body.data.map((o) => o.slug)).toContain("drill-org");
  });
});
