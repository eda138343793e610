import { Webhook } from "standardwebhooks";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { adminApi, obtainAdminTokens } from "../support/admin-api";
import { createUser } from "../support/factories";
import { startTestPorta, type TestPorta } from "../support/porta";
import { createTenant, eventually, openLoginPage, PASSWORD, submitPassword, uniqueEmail, type Tenant } from "../email/helpers";
import { startReceiver, type Received, type Receiver } from "./helpers";

/**
 * Signed webhooks per organization (decision 047), end to end: a receiver in the test
 * gets deliveries of admin changes and sign-ins, verifies them with the Standard Webhooks
 * library, and sees retries, a dead letter, a replay and an endpoint turned off after failures.
 * A write that rolls back sends nothing. The retry schedule is shortened to 1 s, 1 s.
 */

interface Endpoint {
  id: string;
  url: string;
  enabled: boolean;
  eventTypes: string[];
  consecutiveFailures: number;
  disabledReason: string | null;
  secret?: string;
}
interface Delivery {
  id: string;
  eventType: string;
  status: string;
  attempts: number;
  lastStatusCode: number | null;
  auditEntryId: string | null;
}
interface DeliveryDetail extends Delivery {
  payload: string;
  attemptLog: Array<{ attempt: number; statusCode: number | null; error: string | null; durationMs: number; responseBody: string | null }>;
}
interface Payload {
  type: string;
  timestamp: string;
  data: { auditEntryId: string; organizationId: string; actor: { type: string; id: string | null }; target: { type: string; id: string } | null; details: Record<string, unknown> };
}

let porta: TestPorta;
let receiver: Receiver;
let tenant: Tenant;
let api: ReturnType<typeof adminApi>;
/** When set, the next write throws after its audit entries and deliveries were written. */
let failNextWrite = false;

beforeAll(async () => {
  receiver = await startReceiver();
  porta = await startTestPorta({
    env: { OUTBOUND_ALLOW_PRIVATE_NETWORKS: "true" },
    queue: { retrySchedules: { webhook: [1, 1] } },
    faults: {
      afterAudit: () => {
        if (!failNextWrite) return;
        failNextWrite = false;
        throw new Error("injected failure after the audit entry");
      },
    },
  });
  tenant = await createTenant(porta);
  api = adminApi(porta, (await obtainAdminTokens(porta)).accessToken);
}, 120_000);
afterAll(async () => {
  await porta?.stop();
  await receiver?.close();
});

const base = () => `/organizations/${tenant.org.id}/webhooks`;

async function addEndpoint(path: string, eventTypes: string[]): Promise<Endpoint & { secret: string }> {
  const res = await api.post<Endpoint & { secret: string }>(base(), { url: receiver.url(path), eventTypes, description: `receiver ${path}` });
  expect(res.status).toBe(201);
  return res.body;
}

const at = (path: string) => receiver.received.filter((r) => r.path === path);

function verified(secret: string, request: Received): Payload {
  // The Standard Webhooks reference library checks the signature and the timestamp's freshness.
  return new Webhook(secret).verify(request.body, {
    "webhook-id": String(request.headers["webhook-id"]),
    "webhook-timestamp": String(request.headers["webhook-timestamp"]),
    "webhook-signature": String(request.headers["webhook-signature"]),
  }) as Payload;
}

async function deliveries(endpointId: string): Promise<Delivery[]> {
  const res = await api.get<{ data: Delivery[] }>(`${base()}/${endpointId}/deliveries`);
  expect(res.status).toBe(200);
  return res.body.data;
}

function settled(endpointId: string, count: number, status: string | string[]) {
  const wanted = Array.isArray(status) ? status : [status];
  return eventually(
    () => deliveries(endpointId),
    (list) => list.length >= count && list.slice(0, count).every((d) => wanted.includes(d.status)),
    20_000,
  );
}

async function detail(endpointId: string, deliveryId: string): Promise<DeliveryDetail> {
  const res = await api.get<DeliveryDetail>(`${base()}/${endpointId}/deliveries/${deliveryId}`);
  expect(res.status).toBe(200);
  return res.body;
}

describe("bad input", () => {
  it("refuses a bad endpoint with 422 and field details, and writes nothing", async () => {
    const cases: Array<[unknown, string]> = [
      [{ eventTypes: ["user.created"] }, "url"],
      [{ url: "ftp://example.com/hook", eventTypes: ["user.created"] }, "url"],
      [{ url: "not a url", eventTypes: ["user.created"] }, "url"],
      [{ url: "https://user:pw@example.com/hook", eventTypes: ["user.created"] }, "url"],
      [{ url: "https://example.com/hook", eventTypes: [] }, "eventTypes"],
      [{ url: "https://example.com/hook", eventTypes: ["user.exploded"] }, "eventTypes.0"],
      [{ url: "https://example.com/hook", eventTypes: ["user.created"], secret: "whsec_mine" }, ""],
    ];
    for (const [body, field] of cases) {
      const res = await api.post<{ error: { code: string; details: Array<{ field: string }> } }>(base(), body);
      expect(res.status, JSON.stringify(body)).toBe(422);
      expect(res.body.error.code).toBe("validation_failed");
      if (field) expect(res.body.error.details.map((d) => d.field), JSON.stringify(body)).toContain(field);
    }
    expect(await porta.services.db.prisma.webhookEndpoint.count({ where: { organizationId: tenant.org.id } })).toBe(0);
    expect((await api.get(`${base()}/00000000-0000-4000-8000-000000000000`)).status).toBe(404);
  });
});

describe("deliveries", () => {
  it("signs an admin change and a sign-in per Standard Webhooks; the secret is shown once and never audited", async () => {
    const endpoint = await addEndpoint("/main", ["user.*", "auth.login.success"]);
    expect(endpoint.secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    const read = await api.get<Endpoint>(`${base()}/${endpoint.id}`);
    expect(read.body).not.toHaveProperty("secret");
    expect(read.headers.get("etag")).toBeTruthy();
    const audited = await porta.services.db.prisma.auditEntry.findFirst({ where: { eventType: "webhook.created", targetId: endpoint.id } });
    expect(JSON.stringify(audited)).not.toContain(endpoint.secret.slice(6));

    // An admin change: a user created through the Admin API.
    const email = uniqueEmail("hooked");
    const created = await api.post<{ id: string }>(`/organizations/${tenant.org.id}/users`, { email, givenName: "Grace", familyName: "Hopper" });
    expect(created.status).toBe(201);
    await eventually(async () => at("/main"), (list) => list.length >= 1, 15_000);
    const first = verified(endpoint.secret, at("/main")[0]!);
    expect(first).toMatchObject({ type: "user.created", data: { organizationId: tenant.org.id, target: { type: "user", id: created.body.id }, actor: { type: "admin" } } });

    // A sign-in with a password, through the login page.
    const user = await createUser(porta.services.db.prisma, tenant.org.id, { email: uniqueEmail("signer"), password: PASSWORD });
    const page = await openLoginPage(tenant);
    expect((await submitPassword(page, user.email, PASSWORD)).status).toBe(302);
    await eventually(async () => at("/main"), (list) => list.some((r) => verified(endpoint.secret, r).type === "auth.login.success"), 15_000);
    const signIn = at("/main").map((r) => verified(endpoint.secret, r)).find((p) => p.type === "auth.login.success")!;
    expect(signIn.data.target).toEqual({ type: "user", id: user.id });

    // A tampered body or another secret does not verify.
    const request = at("/main")[0]!;
    expect(() => verified(endpoint.secret, { ...request, body: request.body.replace("user.created", "user.deleted") })).toThrow();
    expect(() => verified(`whsec_${Buffer.alloc(32, 7).toString("base64")}`, request)).toThrow();

    // The delivery log: delivered, 200, one attempt, the audit entry it reports.
    const log = await settled(endpoint.id, 2, "delivered");
    const userCreated = log.find((d) => d.eventType === "user.created")!;
    expect(userCreated).toMatchObject({ status: "delivered", attempts: 1, lastStatusCode: 200 });
    expect(userCreated.auditEntryId).toBe(first.data.auditEntryId);
    expect(request.headers["webhook-id"]).toBe(userCreated.id);
    const one = await detail(endpoint.id, userCreated.id);
    expect(one.attemptLog).toEqual([expect.objectContaining({ attempt: 1, statusCode: 200, error: null, responseBody: "thanks" })]);
    await api.delete(`${base()}/${endpoint.id}`);
  });

  it("receives the event of its own creation, written in the same transaction, right after other writes of the organization", async () => {
    // An audited write just before: nothing may still believe the organization has no such endpoint.
    expect((await api.post(`/organizations/${tenant.org.id}/users`, { email: uniqueEmail("before"), givenName: "Ada", familyName: "Byron" })).status).toBe(201);
    const endpoint = await addEndpoint("/self", ["webhook.*"]);
    await eventually(async () => at("/self"), (list) => list.length >= 1, 15_000);
    expect(verified(endpoint.secret, at("/self")[0]!)).toMatchObject({ type: "webhook.created", data: { target: { type: "webhook", id: endpoint.id } } });
    await api.delete(`${base()}/${endpoint.id}`);
  });

  it("retries after 500 on the schedule, then delivers; events outside the filter are not sent", async () => {
    const endpoint = await addEndpoint("/flaky", ["organization.updated"]);
    receiver.script("/flaky", [500, 500, 200]);
    await createUser(porta.services.db.prisma, tenant.org.id); // not audited, and not in the filter
    const renamed = await api.put(`/organizations/${tenant.org.id}`, { name: `Renamed ${Date.now()}` });
    expect(renamed.status).toBe(200);
    const [delivery] = await settled(endpoint.id, 1, "delivered");
    const one = await detail(endpoint.id, delivery!.id);
    expect(one.attemptLog.map((a) => a.statusCode)).toEqual([500, 500, 200]);
    expect(one.attemptLog[0]!.responseBody).toBe("refused with 500");
    expect(at("/flaky")).toHaveLength(3);
    // Every attempt carries the same id, each signed anew.
    expect(new Set(at("/flaky").map((r) => r.headers["webhook-id"])).size).toBe(1);
    for (const r of at("/flaky")) expect(verified(endpoint.secret, r).type).toBe("organization.updated");
    const after = await api.get<Endpoint>(`${base()}/${endpoint.id}`);
    expect(after.body.consecutiveFailures).toBe(0);
    await api.delete(`${base()}/${endpoint.id}`);
  });

  it("leaves a delivery dead after the last retry, and replays it with the same id", async () => {
    const endpoint = await addEndpoint("/down", ["organization.updated"]);
    receiver.script("/down", [503]);
    expect((await api.put(`/organizations/${tenant.org.id}`, { name: `Dead ${Date.now()}` })).status).toBe(200);
    const [dead] = await settled(endpoint.id, 1, "dead");
    expect(dead).toMatchObject({ status: "dead", attempts: 3, lastStatusCode: 503 });
    expect(at("/down")).toHaveLength(3);
    expect((await api.get<{ data: Delivery[] }>(`${base()}/${endpoint.id}/deliveries?status=dead`)).body.data.map((d) => d.id)).toEqual([dead!.id]);

    receiver.script("/down", [200]);
    const replayed = await api.post<DeliveryDetail>(`${base()}/${endpoint.id}/deliveries/${dead!.id}/replay`);
    expect(replayed.status).toBe(200);
    const [delivered] = await settled(endpoint.id, 1, "delivered");
    expect(delivered).toMatchObject({ id: dead!.id, attempts: 4, lastStatusCode: 200 });
    expect(at("/down")).toHaveLength(4);
    expect(at("/down")[3]!.headers["webhook-id"]).toBe(dead!.id);
    expect(at("/down")[3]!.body).toBe(at("/down")[0]!.body);
    const audit = await porta.services.db.prisma.auditEntry.findFirst({ where: { eventType: "webhook.delivery_replayed", targetId: endpoint.id } });
    expect(audit?.data).toMatchObject({ deliveryId: dead!.id });
    // A delivered one can be replayed again; one being tried cannot be doubled.
    expect((await api.post(`${base()}/${endpoint.id}/deliveries/00000000-0000-4000-8000-000000000000/replay`)).status).toBe(404);
    await api.delete(`${base()}/${endpoint.id}`);
  });

  it("turns an endpoint off after failures in a row, with an audit entry", async () => {
    expect((await api.put("/config/webhooks.disableAfterFailures", { value: 2 })).status).toBe(200);
    try {
      const endpoint = await addEndpoint("/broken", ["organization.updated"]);
      receiver.script("/broken", [500]);
      expect((await api.put(`/organizations/${tenant.org.id}`, { name: `Broken ${Date.now()}` })).status).toBe(200);
      const off = await eventually(
        () => api.get<Endpoint>(`${base()}/${endpoint.id}`),
        (res) => res.body.enabled === false,
        20_000,
      );
      expect(off.body).toMatchObject({ enabled: false, disabledReason: "consecutive_failures", consecutiveFailures: 2 });
      const [delivery] = await settled(endpoint.id, 1, "dead");
      expect(delivery!.attempts).toBe(2);
      const audit = await porta.services.db.prisma.auditEntry.findFirst({ where: { eventType: "webhook.disabled", targetId: endpoint.id } });
      expect(audit).toMatchObject({ actorType: "system", organizationId: tenant.org.id, data: { reason: "consecutive_failures" } });
      // Turned off, it gets nothing; turned on again, it counts afresh.
      expect((await api.post(`${base()}/${endpoint.id}/deliveries/${delivery!.id}/replay`)).status).toBe(409);
      const on = await api.put<Endpoint>(`${base()}/${endpoint.id}`, { enabled: true });
      expect(on.body).toMatchObject({ enabled: true, disabledReason: null, consecutiveFailures: 0 });
      await api.delete(`${base()}/${endpoint.id}`);
    } finally {
      await api.put("/config/webhooks.disableAfterFailures", { value: 20 });
    }
  });

  it("sends nothing for a write that rolled back", async () => {
    const endpoint = await addEndpoint("/atomic", ["user.created"]);
    const email = uniqueEmail("rolled-back");
    failNextWrite = true;
    porta.logs.expectError("injected failure after the audit entry");
    const refused = await api.post(`/organizations/${tenant.org.id}/users`, { email });
    expect(refused.status).toBe(500);
    expect(await porta.services.db.prisma.user.count({ where: { email } })).toBe(0);
    expect(await porta.services.db.prisma.webhookDelivery.count({ where: { endpointId: endpoint.id } })).toBe(0);
    // A committed write afterwards is delivered, and it is the only one.
    const kept = uniqueEmail("committed");
    expect((await api.post(`/organizations/${tenant.org.id}/users`, { email: kept })).status).toBe(201);
    await settled(endpoint.id, 1, "delivered");
    expect(at("/atomic").map((r) => JSON.stringify(verified(endpoint.secret, r)))).toEqual([expect.stringContaining(kept)]);
    expect(at("/atomic").some((r) => r.body.includes(email))).toBe(false);
    await api.delete(`${base()}/${endpoint.id}`);
  });

  it("delivers what an audited read records (a user's data export)", async () => {
    const endpoint = await addEndpoint("/reads", ["user.exported"]);
    const user = await createUser(porta.services.db.prisma, tenant.org.id);
    expect((await api.get(`/organizations/${tenant.org.id}/users/${user.id}/export`)).status).toBe(200);
    const [delivery] = await settled(endpoint.id, 1, "delivered");
    expect(delivery!.eventType).toBe("user.exported");
    expect(verified(endpoint.secret, at("/reads")[0]!).data.target).toEqual({ type: "user", id: user.id });
    await api.delete(`${base()}/${endpoint.id}`);
  });

  it("rotates the secret: later deliveries verify with the new one only, and If-Match guards changes", async () => {
    const endpoint = await addEndpoint("/rotate", ["organization.updated"]);
    const read = await api.get<Endpoint>(`${base()}/${endpoint.id}`);
    const rotated = await api.post<Endpoint & { secret: string }>(`${base()}/${endpoint.id}/rotate-secret`, undefined, { "if-match": read.headers.get("etag")! });
    expect(rotated.status).toBe(200);
    expect(rotated.body.secret).not.toBe(endpoint.secret);
    expect((await api.put(`${base()}/${endpoint.id}`, { description: "stale" }, { "if-match": read.headers.get("etag")! })).status).toBe(409);
    expect((await api.put(`/organizations/${tenant.org.id}`, { name: `Rotated ${Date.now()}` })).status).toBe(200);
    await settled(endpoint.id, 1, "delivered");
    const request = at("/rotate")[0]!;
    expect(verified(rotated.body.secret, request).type).toBe("organization.updated");
    expect(() => verified(endpoint.secret, request)).toThrow();
    expect((await api.delete(`${base()}/${endpoint.id}`)).status).toBe(204);
    expect((await api.get(`${base()}/${endpoint.id}`)).status).toBe(404);
  });
});
