import { hostname } from "node:os";
import { afterAll, beforeAll, expect, it } from "vitest";
import { sendWebhook } from "~/.server/webhooks/send";
import { adminApi, obtainAdminTokens } from "../support/admin-api";
import { startTestPorta, type TestPorta } from "../support/porta";
import { createTenant, eventually, type Tenant } from "../email/helpers";
import { startReceiver, type Receiver } from "./helpers";

/**
 * Without OUTBOUND_ALLOW_PRIVATE_NETWORKS, webhooks reach public https addresses only: an
 * endpoint on a private, loopback or special-use address is refused when it is added, and one
 * whose name resolves to such an address is refused when each attempt connects (the receiver,
 * listening on every interface, never hears of it). Decision 047.
 */
let porta: TestPorta;
let receiver: Receiver;
let tenant: Tenant;
let api: ReturnType<typeof adminApi>;

beforeAll(async () => {
  receiver = await startReceiver("0.0.0.0");
  porta = await startTestPorta({ env: { OUTBOUND_ALLOW_PRIVATE_NETWORKS: undefined }, queue: { retrySchedules: { webhook: [] } } });
  tenant = await createTenant(porta);
  api = adminApi(porta, (await obtainAdminTokens(porta)).accessToken);
}, 120_000);
afterAll(async () => {
  await porta?.stop();
  await receiver?.close();
});

const base = () => `/organizations/${tenant.org.id}/webhooks`;

it("refuses endpoints on plain http or private, loopback and special-use addresses with 422", async () => {
  for (const url of [
    `http://example.com/hook`,
    `https://127.0.0.1:${receiver.port}/hook`,
    `https://localhost:${receiver.port}/hook`,
    `https://[::1]:${receiver.port}/hook`,
    `https://10.1.2.3/hook`,
    `https://169.254.169.254/latest/meta-data`,
    `https://[::ffff:127.0.0.1]/hook`,
  ]) {
    const res = await api.post<{ error: { details: Array<{ field: string }> } }>(base(), { url, eventTypes: ["user.*"] });
    expect(res.status, url).toBe(422);
    expect(res.body.error.details.map((d) => d.field)).toEqual(["url"]);
  }
  expect(await porta.services.db.prisma.webhookEndpoint.count()).toBe(0);
});

it("refuses at delivery a name that resolves to a private address, and logs why", async () => {
  // This machine's name resolves to a loopback or private address (/etc/hosts).
  const created = await api.post<{ id: string }>(base(), { url: `https://${hostname()}:${receiver.port}/named`, eventTypes: ["organization.updated"] });
  expect(created.status).toBe(201);
  expect((await api.put(`/organizations/${tenant.org.id}`, { name: `SSRF ${Date.now()}` })).status).toBe(200);
  const list = await eventually(
    () => api.get<{ data: Array<{ id: string; status: string; lastError: string | null }> }>(`${base()}/${created.body.id}/deliveries`),
    (res) => res.body.data[0]?.status === "dead",
    15_000,
  );
  expect(list.body.data[0]).toMatchObject({ status: "dead", lastError: "OUTBOUND_REFUSED" });
  expect(receiver.received).toHaveLength(0);
});

it("the guard itself: refused without the operator's allowance, sent with it", async () => {
  const request = { headers: {}, body: "{}", timeoutMs: 2_000, maxResponseBytes: 1024 };
  const url = `http://${hostname()}:${receiver.port}/direct`;
  expect(await sendWebhook(url, { ...request, allowPrivateNetworks: false })).toMatchObject({ statusCode: null, error: "OUTBOUND_REFUSED" });
  expect(await sendWebhook(`http://127.0.0.1:${receiver.port}/direct`, { ...request, allowPrivateNetworks: false })).toMatchObject({ error: "OUTBOUND_REFUSED" });
  expect(receiver.received).toHaveLength(0);
  expect(await sendWebhook(url, { ...request, allowPrivateNetworks: true })).toMatchObject({ statusCode: 200, error: null, responseBody: "thanks" });
  expect(receiver.received.map((r) => r.path)).toEqual(["/direct"]);
});

it("the guard never follows a redirect, gives up at its deadline, and reads a bounded answer", async () => {
  const request = { headers: {}, body: "{}", allowPrivateNetworks: true, maxResponseBytes: 4096 };
  receiver.script("/moved", [302]);
  expect(await sendWebhook(receiver.url("/moved"), { ...request, timeoutMs: 2_000 })).toMatchObject({ statusCode: 302, error: null });
  receiver.script("/hang", [0]);
  const hung = await sendWebhook(receiver.url("/hang"), { ...request, timeoutMs: 300 });
  expect(hung).toMatchObject({ statusCode: null, error: "TIMEOUT" });
  expect(hung.durationMs).toBeLessThan(2_000);
  receiver.script("/big", [200], { bodyBytes: 1_000_000 });
  const big = await sendWebhook(receiver.url("/big"), { ...request, timeoutMs: 5_000 });
  expect(big).toMatchObject({ statusCode: 200, error: null });
  expect(big.responseBody).toHaveLength(1024);
  expect(receiver.received.filter((r) => r.path === "/elsewhere")).toHaveLength(0);
});
