import { randomBytes } from "node:crypto";
import { readFileSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createEncrypter } from "~/.server/crypto/encryption";
import { createTenant, eventually, openLoginPage, requestPasswordResetOn, uniqueEmail } from "./email/helpers";
import { createUser } from "./support/factories";
import { startTestPorta, type TestPorta } from "./support/porta";
import { startSmtpPeer, type SmtpPeer } from "./support/smtp";

/** The release label as the project declares it. */
const RELEASE = (JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8")) as { version: string }).version;

describe("GET /health", () => {
  let porta: TestPorta;
  beforeAll(async () => {
    porta = await startTestPorta();
  });
  afterAll(async () => {
    await porta?.stop();
  });

  it("answers 200 ok with the database and cache checks, and names its release without a token", async () => {
    const res = await fetch(`${porta.url}/health`);
    expect(res.status).toBe(200);
    expect(res.headers.get("cache-control")).toBe("no-store");
    expect(await res.json()).toEqual({ status: "ok", release: RELEASE, checks: { database: "ok", cache: "ok", mail: "ok", keys: "ok" } });
  });

  it("answers 503 while the newest signing key cannot be decrypted with this process's key, and 200 again once it can", async () => {
    // A key written by a process started with another ENCRYPTION_KEY: every token it would sign fails here.
    const org = await porta.services.db.prisma.organization.create({ data: { name: "Other key", slug: `other-key-${Date.now()}` } });
    const foreign = createEncrypter(randomBytes(32));
    const kid = `foreign-${randomBytes(4).toString("hex")}`;
    await porta.services.db.prisma.signingKey.create({
      data: { id: kid, organizationId: org.id, publicJwk: {}, privateJwkEncrypted: foreign.encrypt("{}", `signing-key:${kid}`), status: "staged" },
    });
    const res = await fetch(`${porta.url}/health`);
    expect(res.status).toBe(503);
    expect(await res.json()).toMatchObject({ status: "unavailable", checks: { database: "ok", keys: "unavailable" } });
    await porta.services.db.prisma.signingKey.delete({ where: { id: kid } });
    const again = await fetch(`${porta.url}/health`);
    expect(again.status).toBe(200);
    expect(await again.json()).toMatchObject({ status: "ok", checks: { keys: "ok" } });
  });

  it("answers liveness and readiness for orchestrators: alive, ready with its migrations applied", async () => {
    const live = await fetch(`${porta.url}/health/live`);
    expect(live.status).toBe(200);
    expect(live.headers.get("cache-control")).toBe("no-store");
    expect(await live.json()).toEqual({ status: "ok" });
    const ready = await fetch(`${porta.url}/health/ready`);
    expect(ready.status).toBe(200);
    expect(ready.headers.get("cache-control")).toBe("no-store");
    expect(await ready.json()).toEqual({ status: "ready", checks: { database: "ok", migrations: "ok", draining: false } });
  });

  it("answers 503 once the database is gone; liveness stays 200 (a restart would not bring the database back)", async () => {
    await porta.services.db.close();
    const res = await fetch(`${porta.url}/health`);
    expect(res.status).toBe(503);
    expect(await res.json()).toMatchObject({ status: "unavailable", checks: { database: "unavailable" } });
    const ready = await fetch(`${porta.url}/health/ready`);
    expect(ready.status).toBe(503);
    expect(await ready.json()).toEqual({ status: "not_ready", checks: { database: "unavailable", migrations: "unknown", draining: false } });
    expect((await fetch(`${porta.url}/health/live`)).status).toBe(200);
  });
});

describe("GET /health while mail cannot be delivered", () => {
  let porta: TestPorta;
  let peer: SmtpPeer;
  beforeAll(async () => {
    peer = await startSmtpPeer({ mode: "refuse", refuseAt: "rcpt" });
    porta = await startTestPorta({ env: peer.env, queue: { retrySchedule: [1, 1, 1, 1, 1, 1] } });
  });
  afterAll(async () => {
    await porta?.stop();
    await peer?.close();
  });
  const health = async () => {
    const res = await fetch(`${porta.url}/health`);
    return { status: res.status, body: (await res.json()) as unknown };
  };

  it("is degraded (200) from a failed delivery until one succeeds", async () => {
    expect(await health()).toEqual({ status: 200, body: { status: "ok", release: RELEASE, checks: { database: "ok", cache: "ok", mail: "ok", keys: "ok" } } });
    const tenant = await createTenant(porta);
    const user = await createUser(porta.services.db.prisma, tenant.org.id, { email: uniqueEmail("health") });
    expect((await requestPasswordResetOn(await openLoginPage(tenant), user.email)).status).toBe(200);
    await peer.waitUntil(() => peer.refusedRecipients.includes(user.email), 20_000, "a refused delivery");
    // The refusal reaches Porta a moment after the peer recorded it.
    const degraded = await eventually(health, (h) => JSON.stringify(h).includes('"mail":"degraded"'), 5_000);
    expect(degraded).toEqual({ status: 200, body: { status: "degraded", release: RELEASE, checks: { database: "ok", cache: "ok", mail: "degraded", keys: "ok" } } });
    // Still degraded at the next failed attempt, and ok once a delivery succeeds.
    await peer.waitUntil(() => peer.refusedRecipients.filter((r) => r === user.email).length >= 2, 20_000, "a second refused delivery");
    expect((await health()).body).toMatchObject({ status: "degraded" });
    peer.mode = "accept";
    await peer.waitForMail(user.email, { timeoutMs: 20_000 });
    const healed = await eventually(health, (h) => JSON.stringify(h).includes('"mail":"ok"'), 5_000);
    expect(healed).toEqual({ status: 200, body: { status: "ok", release: RELEASE, checks: { database: "ok", cache: "ok", mail: "ok", keys: "ok" } } });
  });
});
