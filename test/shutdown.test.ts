import { mkdtempSync, rmSync } from "node:fs";
import { connect, type Socket } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { exitWithin, freePort, spawnServer, waitForHealth, type ServerProcess } from "./support/process";

/** Resolves with the error code of a refused connection, or "connected" if the port still accepts. */
function tryConnect(port: number): Promise<string> {
  return new Promise((resolve) => {
    const socket = connect(port, "127.0.0.1");
    socket.once("connect", () => {
      socket.destroy();
      resolve("connected");
    });
    socket.once("error", (error: NodeJS.ErrnoException) => resolve(error.code ?? error.message));
  });
}

/** Everything the server sends on a socket until it closes or `until` matches. */
function readResponse(socket: Socket, until: RegExp, timeoutMs: number): Promise<string> {
  return new Promise((resolve, reject) => {
    let text = "";
    const timer = setTimeout(() => reject(new Error(`no complete response within ${timeoutMs} ms: ${JSON.stringify(text)}`)), timeoutMs);
    const done = () => {
      clearTimeout(timer);
      resolve(text);
    };
    socket.setEncoding("utf8");
    socket.on("data", (chunk: string) => {
      text += chunk;
      if (until.test(text)) done();
    });
    socket.once("close", done);
    socket.once("error", (error) => {
      clearTimeout(timer);
      reject(error);
    });
  });
}

describe("graceful shutdown of server.ts", () => {
  const dataDir = mkdtempSync(path.join(tmpdir(), "porta-shutdown-"));
  let server: ServerProcess | undefined;

  afterAll(() => {
    server?.kill("SIGKILL");
    rmSync(dataDir, { recursive: true, force: true });
  });

  it("on SIGTERM stops accepting connections, finishes the request in flight, and exits 0 within 10 s", async () => {
    const port = await freePort();
    server = spawnServer({ NODE_ENV: "production", PORT: String(port), DATA_DIR: dataDir, LOG_LEVEL: "info" });
    // About 8 s on an idle machine (initdb of the embedded database, migrations, keys); far
    // longer when the machine is busy, which is not what this test is about.
    const ready = await waitForHealth(`http://127.0.0.1:${port}`, server, 120_000);
    expect(ready.status).toBe(200);
    expect(server.stdout()).toContain("Porta is running at http://localhost:");

    // A request in flight: its headers have reached the server, the last line has not.
    const inFlight = connect(port, "127.0.0.1");
    await new Promise<void>((resolve, reject) => {
      inFlight.once("connect", resolve);
      inFlight.once("error", reject);
    });
    inFlight.write(`GET /health HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nX-Request-Id: in-flight-request-1\r\n`);
    const response = readResponse(inFlight, /\r\n\r\n\{.*\}$/s, 10_000);
    await new Promise((resolve) => setTimeout(resolve, 200));

    const signalledAt = Date.now();
    server.kill("SIGTERM");
    await new Promise((resolve) => setTimeout(resolve, 500));

    // New connections are refused while the request in flight is still being served.
    expect(await tryConnect(port)).toBe("ECONNREFUSED");
    expect(server.child.exitCode).toBeNull();

    inFlight.write("\r\n");
    const text = await response;
    expect(text).toMatch(/^HTTP\/1\.1 200 OK\r\n/);
    expect(text).toMatch(/x-request-id: in-flight-request-1/i);
    expect(text).toMatch(/"database":"ok"/);
    inFlight.end();

    const exit = await exitWithin(server, 10_000 - (Date.now() - signalledAt));
    expect(exit, `still running 10 s after SIGTERM; stderr: ${server.stderr()}`).toBeDefined();
    expect(exit!.code).toBe(0);
    expect(exit!.signal).toBeNull();
    expect(Date.now() - signalledAt).toBeLessThan(10_000);
    expect(server.stdout()).toContain("shutting down: draining requests");
    expect(server.stderr()).toBe("");
    expect(await tryConnect(port)).toBe("ECONNREFUSED");
  }, 180_000);

  it("with SHUTDOWN_DELAY_SECONDS, answers not-ready at SIGTERM while still serving, then stops accepting and exits 0", async () => {
    const port = await freePort();
    server?.kill("SIGKILL");
    server = spawnServer({ NODE_ENV: "production", PORT: String(port), DATA_DIR: dataDir, LOG_LEVEL: "info", SHUTDOWN_DELAY_SECONDS: "3" });
    const ready = await waitForHealth(`http://127.0.0.1:${port}`, server, 120_000);
    expect(ready.status).toBe(200);
    expect((await fetch(`http://127.0.0.1:${port}/health/ready`)).status).toBe(200);

    const signalledAt = Date.now();
    server.kill("SIGTERM");
    await new Promise((resolve) => setTimeout(resolve, 500));
    // Still accepting (a load balancer may send a little longer), but no longer ready.
    const draining = await fetch(`http://127.0.0.1:${port}/health/ready`);
    expect(draining.status).toBe(503);
    expect(await draining.json()).toMatchObject({ status: "not_ready", checks: { draining: true } });
    expect((await fetch(`http://127.0.0.1:${port}/health/live`)).status).toBe(200);

    const exit = await exitWithin(server, 15_000);
    expect(exit?.code).toBe(0);
    // Not before the delay: the node kept serving while it said it was going.
    expect(Date.now() - signalledAt).toBeGreaterThanOrEqual(3_000);
    expect(await tryConnect(port)).toBe("ECONNREFUSED");
    expect(server.stderr()).toBe("");
  }, 180_000);
});
