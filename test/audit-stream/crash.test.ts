import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { signInAsAdmin } from "../support/admin-api";
import { freePort, spawnServer, waitForHealth, type ServerProcess } from "../support/process";
import { startHttpReceiver, type HttpReceiver, type Received } from "./helpers";

/**
 * Porta is SIGKILLed while the audit stream is in the middle of a delivery (the receiver has read
 * the batch and never answers). After the restart the entry is delivered: at least once. The
 * receiver may already have taken in the batch it never acknowledged, so a copy is possible; the
 * entry's id is in every event for the receiver to drop it. Porta's own server, embedded (no
 * DATABASE_URL), the same DATA_DIR across the restart, a deployment sink from AUDIT_SINKS.
 */
const ADMIN = { email: "stream-crash-admin@porta.test", password: "correct horse battery staple 42" };

interface Event {
  type: string;
  data: { auditEntryId: string; organizationId: string | null };
}
const eventsOf = (requests: Received[]) => requests.flatMap((r) => r.body.split("\n").filter(Boolean).map((line) => JSON.parse(line) as Event));

async function until(check: () => boolean, timeoutMs: number, what: string) {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

describe("SIGKILL during an audit stream delivery", () => {
  const dataDir = mkdtempSync(path.join(tmpdir(), "porta-stream-crash-"));
  let receiver: HttpReceiver | undefined;
  let server: ServerProcess | undefined;

  afterAll(async () => {
    server?.kill("SIGKILL");
    if (server) await server.exited;
    await receiver?.close();
    rmSync(dataDir, { recursive: true, force: true });
  }, 60_000);

  async function start(port: number, sinkUrl: string) {
    server = spawnServer({
      NODE_ENV: "production",
      PORT: String(port),
      DATA_DIR: dataDir,
      ADMIN_BOOTSTRAP_EMAIL: ADMIN.email,
      ADMIN_BOOTSTRAP_PASSWORD: ADMIN.password,
      OUTBOUND_ALLOW_PRIVATE_NETWORKS: "true",
      AUDIT_SINKS: JSON.stringify([{ name: "siem", kind: "jsonl", url: sinkUrl, eventFamilies: ["organization.*"] }]),
      LOG_LEVEL: "warn",
    });
    const ready = await waitForHealth(`http://127.0.0.1:${port}`, server, 120_000);
    expect(ready.status).toBe(200);
  }

  it("delivers the interrupted entry after the restart", { timeout: 300_000 }, async () => {
    receiver = await startHttpReceiver();
    // The first request is read and never answered: the drain is mid-delivery when the process dies.
    receiver.script("/siem", [0, 200]);
    const port = await freePort();
    const base = `http://localhost:${port}`;
    await start(port, receiver.url("/siem"));
    const { accessToken } = await signInAsAdmin(`${base}/porta-admin`, ADMIN);
    const created = await fetch(`${base}/api/admin/organizations`, {
      method: "POST",
      headers: { authorization: `Bearer ${accessToken}`, "content-type": "application/json" },
      body: JSON.stringify({ name: "Stream Crash", slug: `stream-crash-${randomBytes(3).toString("hex")}` }),
    });
    expect(created.status).toBe(201);
    const { id: organizationId } = (await created.json()) as { id: string };
    const isOurs = (e: Event) => e.type === "organization.created" && e.data.organizationId === organizationId;

    await until(() => eventsOf(receiver!.seen).some(isOurs), 30_000, "the held delivery");
    expect(eventsOf(receiver.received).filter(isOurs)).toHaveLength(0);
    server!.kill("SIGKILL");
    await server!.exited;

    await start(port, receiver.url("/siem"));
    const restartedAt = Date.now();
    await until(() => eventsOf(receiver!.received).some(isOurs), 60_000, "the delivery after the restart");
    expect(Date.now() - restartedAt).toBeLessThan(20_000);
    // Acknowledged exactly once; the unacknowledged copy the receiver read before the crash carries the same id.
    const acknowledged = eventsOf(receiver.received).filter(isOurs);
    expect(acknowledged).toHaveLength(1);
    const ids = new Set(eventsOf(receiver.seen).filter(isOurs).map((e) => e.data.auditEntryId));
    expect(ids.size).toBe(1);
  });
});
