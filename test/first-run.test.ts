import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { signInAsAdmin } from "./support/admin-api";
import { exitWithin, freePort, spawnServer, waitForHealth, type ServerProcess } from "./support/process";

/**
 * What a new user does first: `npm start` with no configuration at all, then signs in with the
 * credentials it printed. And what protects the embedded database: one process per DATA_DIR.
 */

const scratch = mkdtempSync(path.join(tmpdir(), "porta-first-run-"));
const spawned: ServerProcess[] = [];

afterAll(async () => {
  for (const server of spawned) server.kill("SIGKILL");
  await Promise.all(spawned.map((server) => server.exited));
  rmSync(scratch, { recursive: true, force: true });
});

/** The embedded default: only a port and a data directory, as `npm start` on a fresh clone. */
async function startFresh(dataDir: string, port?: number) {
  const chosen = port ?? (await freePort());
  const server = spawnServer({ NODE_ENV: "production", PORT: String(chosen), DATA_DIR: dataDir });
  spawned.push(server);
  return { server, url: `http://localhost:${chosen}` };
}

function printedCredentials(stdout: string): { email: string; password: string } {
  const email = /email:\s+(\S+)/.exec(stdout)?.[1];
  const password = /password:\s+(\S+)\s+\(shown only this once\)/.exec(stdout)?.[1];
  if (!email || !password) throw new Error(`no credentials printed:\n${stdout}`);
  return { email, password };
}

function expectOneLine(stderr: string, mentions: RegExp) {
  const lines = stderr.split("\n").filter((line) => line.trim() !== "");
  expect(lines, stderr).toHaveLength(1);
  expect(lines[0]).toMatch(mentions);
  expect(stderr).not.toContain("    at ");
}

describe("the first run with no configuration", () => {
  const dataDir = path.join(scratch, "fresh");
  let first: Awaited<ReturnType<typeof startFresh>>;

  it("prints an administrator who can sign in through the pages and call the Admin API", async () => {
    first = await startFresh(dataDir);
    expect((await waitForHealth(first.url, first.server, 90_000)).status).toBe(200);
    // The credentials block is written before the "running at" line.
    while (!first.server.stdout().includes("Console:")) await new Promise((resolve) => setTimeout(resolve, 50));
    const credentials = printedCredentials(first.server.stdout());
    expect(credentials.email).toBe("admin@localhost");
    // The banner says where those credentials are used, and that address answers.
    expect(first.server.stdout()).toContain(`Console: ${first.url}/console  (sign in as the administrator printed above)`);
    expect((await fetch(`${first.url}/console`, { redirect: "manual" })).status).toBe(302);

    const tokens = await signInAsAdmin(`${first.url}/porta-admin`, credentials);
    const res = await fetch(`${first.url}/api/admin/organizations`, { headers: { authorization: `Bearer ${tokens.accessToken}` } });
    expect(res.status).toBe(200);
    const body = (await res.json()) as { data: Array<{ slug: string }> };
    expect(body.data.map((o) => o.slug)).toContain("porta-admin");
  }, 120_000);

  it("refuses a second process on the same DATA_DIR at once, naming the directory and the holder's PID", async () => {
    const second = await startFresh(dataDir);
    const exit = await exitWithin(second.server, 15_000);
    expect(exit?.code).toBe(1);
    expect(exit!.afterMs).toBeLessThan(15_000);
    expectOneLine(second.server.stderr(), new RegExp(`^porta: configuration error: DATA_DIR: .*${path.basename(dataDir)} is in use by another Porta process \\(PID ${first.server.pid}\\)`));
    // The first one is unharmed.
    expect((await fetch(`${first.url}/health`)).status).toBe(200);
  }, 30_000);

  it("starts again after the holder was killed (a stale lock does not block)", async () => {
    first.server.kill("SIGKILL");
    await first.server.exited;
    expect(readFileSync(path.join(dataDir, "porta.lock"), "utf8")).toContain(String(first.server.pid));
    const again = await startFresh(dataDir);
    expect((await waitForHealth(again.url, again.server, 90_000)).status).toBe(200);
    expect(again.server.stdout()).not.toContain("shown only this once");
    while (!again.server.stdout().includes("Console:")) await new Promise((resolve) => setTimeout(resolve, 50));
    expect(again.server.stdout()).toContain("(sign in as the administrator printed at the first start)");
    again.server.kill("SIGTERM");
    expect((await exitWithin(again.server, 20_000))?.code).toBe(0);
    // A clean stop leaves no lock behind.
    expect(() => readFileSync(path.join(dataDir, "porta.lock"))).toThrow();
  }, 120_000);

  it("treats a lock naming a PID that no longer runs as stale", async () => {
    const dir = path.join(scratch, "stale");
    const fresh = await startFresh(dir);
    await waitForHealth(fresh.url, fresh.server, 90_000);
    fresh.server.kill("SIGTERM");
    await fresh.server.exited;
    // PID 2^22 + 1 is above Linux's pid_max: nothing runs under it.
    writeFileSync(path.join(dir, "porta.lock"), "4194305\n");
    const next = await startFresh(dir);
    expect((await waitForHealth(next.url, next.server, 90_000)).status).toBe(200);
    next.server.kill("SIGTERM");
    await next.server.exited;
  }, 120_000);
});

describe("a port that is already taken", () => {
  let blocker: Server | undefined;
  afterAll(() => blocker?.close());

  it("is reported in one line within seconds, before the database is opened", async () => {
    const port = await freePort();
    blocker = createServer();
    await new Promise<void>((resolve) => blocker!.listen(port, "0.0.0.0", resolve));
    const dir = path.join(scratch, "port");
    const { server } = await startFresh(dir, port);
    const exit = await exitWithin(server, 15_000);
    expect(exit?.code).toBe(1);
    expectOneLine(server.stderr(), new RegExp(`^porta: configuration error: PORT: ${port} is already in use`));
    // Nothing was opened: no embedded database was created.
    expect(() => readFileSync(path.join(dir, "pglite", "PG_VERSION"))).toThrow();
  }, 30_000);
});
