import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { createServer, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { signInAsAdmin } from "../support/admin-api";
import { basicAuth, postForm } from "../support/oidc";
import { freePort, spawnServer, waitForHealth, type ServerProcess } from "../support/process";
import { PUSH, receiverWith, RISC, verifySet } from "./helpers";

/**
 * Porta is SIGKILLed while it pushes a Security Event Token (the receiver has read the SET and
 * never answers). After the restart the push is made again and the receiver accepts it: the same
 * SET, same jti and same bytes, delivered once (the receiver never answered the first push, so
 * it never accepted it; a receiver that had accepted it and not answered in time would see it
 * twice, and de-duplicates by jti as RFC 8935 asks). Porta's compiled server, embedded, the same
 * DATA_DIR across the restart.
 */
const ADMIN = { email: "ssf-crash-admin@porta.test", password: "correct horse battery staple 42" };

interface HoldingReceiver {
  url: string;
  /** Bodies received, and whether each was answered 202. */
  received: Array<{ body: string; accepted: boolean }>;
  hold: boolean;
  close(): Promise<void>;
}

async function startHoldingReceiver(): Promise<HoldingReceiver> {
  const held: ServerResponse[] = [];
  const state: HoldingReceiver = {
    url: "",
    received: [],
    hold: true,
    close: () =>
      new Promise<void>((resolve) => {
        for (const res of held) res.destroy();
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const body = Buffer.concat(chunks).toString("utf8");
      if (state.hold) {
        state.received.push({ body, accepted: false });
        held.push(res);
        return;
      }
      state.received.push({ body, accepted: true });
      res.writeHead(202).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  state.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/events`;
  return state;
}

async function until(check: () => boolean, timeoutMs: number, what: string) {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe("SIGKILL during a Security Event Token push", () => {
  const dataDir = mkdtempSync(path.join(tmpdir(), "porta-ssf-crash-"));
  let receiver: HoldingReceiver | undefined;
  let server: ServerProcess | undefined;

  afterAll(async () => {
    server?.kill("SIGKILL");
    if (server) await server.exited;
    await receiver?.close();
    rmSync(dataDir, { recursive: true, force: true });
  }, 60_000);

  async function start(port: number) {
    server = spawnServer({
      NODE_ENV: "production",
      PORT: String(port),
      DATA_DIR: dataDir,
      OUTBOUND_ALLOW_PRIVATE_NETWORKS: "true",
      ADMIN_BOOTSTRAP_EMAIL: ADMIN.email,
      ADMIN_BOOTSTRAP_PASSWORD: ADMIN.password,
      LOG_LEVEL: "warn",
    });
    const ready = await waitForHealth(`http://127.0.0.1:${port}`, server, 120_000);
    expect(ready.status).toBe(200);
  }

  it("the interrupted SET is delivered after the restart, the same token", { timeout: 300_000 }, async () => {
    receiver = await startHoldingReceiver();
    const port = await freePort();
    const base = `http://localhost:${port}`;
    await start(port);
    const { accessToken } = await signInAsAdmin(`${base}/porta-admin`, ADMIN);
    const call = async <T = Record<string, unknown>>(method: string, route: string, body?: unknown) => {
      const res = await fetch(`${base}/api/admin${route}`, {
        method,
        headers: { authorization: `Bearer ${accessToken}`, ...(body !== undefined ? { "content-type": "application/json" } : {}) },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      return { status: res.status, body: (await res.json().catch(() => undefined)) as T };
    };
    const slug = `ssf-crash-${randomBytes(3).toString("hex")}`;
    const issuer = `${base}/${slug}`;
    const org = await call<{ id: string }>("POST", "/organizations", { name: "SSF Crash", slug });
    expect(org.status).toBe(201);
    const organizationId = org.body.id;
    const resource = await call<{ id: string }>("POST", `/organizations/${organizationId}/api-resources`, { identifier: `${issuer}/ssf`, name: "Shared Signals", scopes: ["ssf.manage"] });
    expect(resource.status, JSON.stringify(resource.body)).toBe(201);
    const client = await call<{ id: string; secret: { value: string } }>("POST", "/clients", { organizationId, name: "Receiver", clientType: "confidential", grantTypes: ["client_credentials"], scope: "openid" });
    expect(client.status, JSON.stringify(client.body)).toBe(201);
    expect((await call("PUT", `/clients/${client.body.id}/api-resources/${resource.body.id}`, { scopes: ["ssf.manage"] })).status).toBe(200);
    const token = await postForm(`${issuer}/auth/token`, { grant_type: "client_credentials", resource: `${issuer}/ssf`, scope: "ssf.manage" }, { authorization: basicAuth(client.body.id, client.body.secret.value) });
    expect(token.status, JSON.stringify(token.body)).toBe(200);
    const ssf = receiverWith(client.body.id, String(token.body.access_token), issuer);
    const user = await call<{ id: string }>("POST", `/organizations/${organizationId}/users`, { email: `crash-${randomBytes(4).toString("hex")}@example.com` });
    expect(user.status, JSON.stringify(user.body)).toBe(201);
    const stream = await ssf.call<{ stream_id: string }>("POST", "/streams", { delivery: { method: PUSH, endpoint_url: receiver.url }, events_requested: [`${RISC}account-disabled`] });
    expect(stream.status, JSON.stringify(stream.body)).toBe(201);
    expect((await ssf.call("POST", "/subjects/add", { stream_id: stream.body.stream_id, subject: { format: "iss_sub", iss: issuer, sub: user.body.id } })).status).toBe(200);

    expect((await call("POST", `/organizations/${organizationId}/users/${user.body.id}/deactivate`)).status).toBe(200);
    // The SET is with the receiver, unanswered: the push is running when the process dies.
    await until(() => receiver!.received.length === 1, 30_000, "a held push");
    server!.kill("SIGKILL");
    await server!.exited;
    receiver.hold = false;

    await start(port);
    await until(() => receiver!.received.some((r) => r.accepted), 60_000, "the push after the restart");
    const accepted = receiver.received.filter((r) => r.accepted);
    expect(accepted).toHaveLength(1);
    expect(accepted[0]!.body).toBe(receiver.received[0]!.body);
    const set = await verifySet(issuer, accepted[0]!.body, client.body.id);
    expect(set.events).toEqual({ [`${RISC}account-disabled`]: expect.objectContaining({}) });
    expect(set.sub_id).toEqual({ format: "iss_sub", iss: issuer, sub: user.body.id });
    // Nothing more comes: the delivered SET is not sent again.
    await new Promise((r) => setTimeout(r, 3000));
    expect(receiver.received.filter((r) => r.accepted)).toHaveLength(1);
  });
});
