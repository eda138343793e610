import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { signInAsAdmin } from "../support/admin-api";
import { freePort, spawnServer, waitForHealth, type ServerProcess } from "../support/process";
import { startSmtpPeer, type SmtpPeer } from "../support/smtp";

/**
 * Porta is SIGKILLed while a mail job is in the middle of its SMTP delivery (the peer has read
 * the message and never answers). On the embedded database the job is the dead process's, and
 * after the restart the mail arrives within seconds, not once an expiry of minutes has passed.
 * Porta's own `server.ts`, embedded (no DATABASE_URL), the same DATA_DIR across the restart.
 */
const ADMIN = { email: "mail-crash-admin@porta.test", password: "correct horse battery staple 42" };

describe("SIGKILL during a mail delivery", () => {
  const dataDir = mkdtempSync(path.join(tmpdir(), "porta-mail-crash-"));
  let peer: SmtpPeer | undefined;
  let server: ServerProcess | undefined;

  afterAll(async () => {
    server?.kill("SIGKILL");
    if (server) await server.exited;
    await peer?.close();
    rmSync(dataDir, { recursive: true, force: true });
  }, 60_000);

  async function start(port: number, smtp: SmtpPeer) {
    server = spawnServer({
      NODE_ENV: "production",
      PORT: String(port),
      DATA_DIR: dataDir,
      ...smtp.env,
      ADMIN_BOOTSTRAP_EMAIL: ADMIN.email,
      ADMIN_BOOTSTRAP_PASSWORD: ADMIN.password,
      LOG_LEVEL: "warn",
    });
    const ready = await waitForHealth(`http://127.0.0.1:${port}`, server, 120_000);
    expect(ready.status).toBe(200);
  }

  it("the interrupted invitation is delivered within seconds of the restart", { timeout: 300_000 }, async () => {
    peer = await startSmtpPeer({ mode: "hold" });
    const port = await freePort();
    const base = `http://localhost:${port}`;
    await start(port, peer);
    const { accessToken } = await signInAsAdmin(`${base}/porta-admin`, ADMIN);
    const call = (route: string, body: unknown) =>
      fetch(`${base}/api/admin${route}`, {
        method: "POST",
        headers: { authorization: `Bearer ${accessToken}`, "content-type": "application/json" },
        body: JSON.stringify(body),
      });
    const org = await call("/organizations", { name: "Mail Crash", slug: `mail-crash-${randomBytes(3).toString("hex")}` });
    expect(org.status).toBe(201);
    const { id: organizationId } = (await org.json()) as { id: string };
    const email = `invitee-${randomBytes(4).toString("hex")}@example.com`;
    expect((await call(`/organizations/${organizationId}/users/invite`, { email })).status).toBe(201);

    // The message is with the peer, unanswered: the job is running when the process dies.
    await peer.waitUntil(() => peer!.held === 1, 30_000, "a held delivery");
    server!.kill("SIGKILL");
    await server!.exited;
    peer.release("refuse");
    peer.mode = "accept";

    await start(port, peer);
    const restartedAt = Date.now();
    const mail = await peer.waitForMail(email, { timeoutMs: 60_000 });
    expect(mail.receivedAt - restartedAt).toBeLessThan(10_000);
    expect(peer.mailsTo(email)).toHaveLength(1);
  });
});
