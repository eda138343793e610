import * as oidc from "openid-client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { adminApi, obtainAdminTokens } from "../support/admin-api";
import { createClient, createOrganization, createUser } from "../support/factories";
import { basicAuth, clientConfiguration, codeFlow, CookieJar, issuerOf, postForm, type OrgRef } from "../support/oidc";
import { startTestPorta, type TestPorta } from "../support/porta";
import { eventually, sleep } from "../email/helpers";
import { startReceiver, type Receiver as Endpoint } from "../webhooks/helpers";
import { CAEP, POLL, PUSH, receiverClient, receiverWith, RISC, VERIFICATION, verifySet, type Receiver, type Set } from "./helpers";

/**
 * OpenID Shared Signals (decision 093), end to end: a receiver, one client of an organization
 * with a client_credentials token for the transmitter's resource, reads the configuration
 * metadata, manages its streams, adds subjects, and gets CAEP and RISC events (Security Event
 * Tokens verified with jsonwebtoken against the organization's JWKS) when an administrator
 * deactivates, reactivates or deletes a user or ends their sessions, pushed (RFC 8935) or polled
 * (RFC 8936). Pushes are retried when the receiver is down, slow or answers 500; a 400 with an
 * error is final. Pushes retry after 1 s here.
 */
let porta: TestPorta;
let endpoint: Endpoint;
let api: ReturnType<typeof adminApi>;
let org: OrgRef;
let other: OrgRef;
let issuer: string;
let resourceId: string;
let receiver: Receiver;

beforeAll(async () => {
  endpoint = await startReceiver();
  porta = await startTestPorta({ env: { OUTBOUND_ALLOW_PRIVATE_NETWORKS: "true" }, queue: { retrySchedules: { "ssf-push": [1, 1, 1] } } });
  api = adminApi(porta, (await obtainAdminTokens(porta)).accessToken);
  const prisma = porta.services.db.prisma;
  org = await createOrganization(prisma);
  other = await createOrganization(prisma);
  issuer = issuerOf(porta, org);
  const resource = await api.post<{ id: string }>(`/organizations/${org.id}/api-resources`, { identifier: `${issuer}/ssf`, name: "Shared Signals", scopes: ["ssf.manage"] });
  expect(resource.status, JSON.stringify(resource.body)).toBe(201);
  resourceId = resource.body.id;
  receiver = await receiverClient(prisma, api, issuer, org.id, resourceId);
}, 120_000);
afterAll(async () => {
  await porta?.stop();
  await endpoint?.close();
});

const at = (path: string) => endpoint.received.filter((r) => r.path === path);
const ALL_EVENTS = [`${CAEP}session-revoked`, `${CAEP}credential-change`, `${RISC}account-disabled`, `${RISC}account-enabled`, `${RISC}account-purged`];

async function pushStream(path: string, events = ALL_EVENTS, by = receiver) {
  const res = await by.call<{ stream_id: string }>("POST", "/streams", { delivery: { method: PUSH, endpoint_url: endpoint.url(path), authorization_header: "Bearer receiver-secret" }, events_requested: events });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body.stream_id;
}

async function subject(streamId: string, value: Record<string, string>, by = receiver) {
  const res = await by.call("POST", "/subjects/add", { stream_id: streamId, subject: value });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
}

/** The SETs a path received, verified, in order of arrival. */
const setsAt = (path: string, audience = receiver.clientId): Promise<Set[]> => Promise.all(at(path).map((r) => verifySet(issuer, r.body, audience)));

describe("configuration metadata", () => {
  it("is published under the organization and at the path-inserted address, and names the endpoints", async () => {
    const res = await fetch(`${issuer}/.well-known/ssf-configuration`);
    expect(res.status).toBe(200);
    const doc = (await res.json()) as Record<string, unknown>;
    expect(doc).toMatchObject({
      spec_version: "1_0",
      issuer,
      jwks_uri: `${issuer}/.well-known/jwks`,
      delivery_methods_supported: [PUSH, POLL],
      configuration_endpoint: `${issuer}/ssf/streams`,
      status_endpoint: `${issuer}/ssf/status`,
      add_subject_endpoint: `${issuer}/ssf/subjects/add`,
      remove_subject_endpoint: `${issuer}/ssf/subjects/remove`,
      verification_endpoint: `${issuer}/ssf/verify`,
      authorization_schemes: [{ spec_urn: "urn:ietf:rfc:6749" }],
      default_subjects: "NONE",
    });
    const inserted = await fetch(`${porta.baseUrl}/.well-known/ssf-configuration/${org.slug}`);
    expect(await inserted.json()).toEqual(doc);
    expect((await fetch(`${porta.baseUrl}/no-such-org/.well-known/ssf-configuration`)).status).toBe(404);
  });
});

describe("who may manage streams", () => {
  it("refuses a missing token and another organization's with 401, and a token for the organization itself (no ssf.manage) with 403", async () => {
    const prisma = porta.services.db.prisma;
    expect((await receiverWith("x", "", issuer).call("GET", "/streams")).status).toBe(401);
    const anonymous = await fetch(`${issuer}/ssf/streams`);
    expect(anonymous.status).toBe(401);
    expect(anonymous.headers.get("www-authenticate")).toContain("Bearer");

    const { client: foreign, secret: foreignSecret } = await createClient(prisma, other.id, { grantTypes: ["client_credentials"], scope: "openid" });
    const foreignToken = await postForm(`${issuerOf(porta, other)}/auth/token`, { grant_type: "client_credentials" }, { authorization: basicAuth(foreign.id, foreignSecret!.value) });
    expect(foreignToken.status).toBe(200);
    const refused = await receiverWith(foreign.id, String(foreignToken.body.access_token), issuer).call<{ error: string }>("GET", "/streams");
    expect(refused.status).toBe(401);
    expect(refused.body.error).toBe("invalid_token");

    const { client, secret } = await createClient(prisma, org.id, { grantTypes: ["client_credentials"], scope: "openid" });
    const own = await postForm(`${issuer}/auth/token`, { grant_type: "client_credentials" }, { authorization: basicAuth(client.id, secret!.value) });
    const forbidden = await receiverWith(client.id, String(own.body.access_token), issuer).call<{ error: string }>("GET", "/streams");
    expect(forbidden.status).toBe(403);
    expect(forbidden.body.error).toBe("insufficient_scope");
  });

  it("creates, reads, updates and deletes a stream; another client of the organization sees none of it (404)", async () => {
    const created = await receiver.call<Record<string, unknown>>("POST", "/streams", {
      delivery: { method: PUSH, endpoint_url: endpoint.url("/crud"), authorization_header: "Bearer s3cret" },
      events_requested: [`${RISC}account-disabled`, "https://example.com/not-an-event"],
      description: "CRUD",
    });
    expect(created.status).toBe(201);
    const streamId = String(created.body.stream_id);
    expect(created.body).toMatchObject({
      iss: issuer,
      aud: receiver.clientId,
      delivery: { method: PUSH, endpoint_url: endpoint.url("/crud") },
      events_requested: [`${RISC}account-disabled`, "https://example.com/not-an-event"],
      events_delivered: [`${RISC}account-disabled`],
      description: "CRUD",
    });
    expect(JSON.stringify(created.body)).not.toContain("s3cret");
    expect(created.body.events_supported).toEqual(expect.arrayContaining(ALL_EVENTS));

    const read = await receiver.call("GET", `/streams?stream_id=${streamId}`);
    expect(read.status).toBe(200);
    expect(read.body).toEqual(created.body);
    const listed = await receiver.call<Array<{ stream_id: string }>>("GET", "/streams");
    expect(listed.body.map((s) => s.stream_id)).toContain(streamId);

    const patched = await receiver.call<Record<string, unknown>>("PATCH", "/streams", { stream_id: streamId, events_requested: [`${CAEP}session-revoked`] });
    expect(patched.status).toBe(200);
    expect(patched.body).toMatchObject({ events_delivered: [`${CAEP}session-revoked`], description: "CRUD", delivery: { endpoint_url: endpoint.url("/crud") } });
    const replaced = await receiver.call<Record<string, unknown>>("PUT", "/streams", { stream_id: streamId, delivery: { method: POLL } });
    expect(replaced.status).toBe(200);
    expect(replaced.body).toMatchObject({ delivery: { method: POLL, endpoint_url: `${issuer}/ssf/poll/${streamId}` }, events_delivered: [] });
    expect(replaced.body.description).toBeUndefined();

    const status = await receiver.call("POST", "/status", { stream_id: streamId, status: "paused", reason: "maintenance" });
    expect(status.body).toEqual({ stream_id: streamId, status: "paused", reason: "maintenance" });
    expect((await receiver.call("GET", `/status?stream_id=${streamId}`)).body).toEqual({ stream_id: streamId, status: "paused", reason: "maintenance" });

    // Administrators see the organization's streams, read-only, without the push Authorization.
    const listedForAdmin = await api.get<{ data: Array<Record<string, unknown>> }>(`/organizations/${org.id}/ssf-streams`);
    expect(listedForAdmin.status).toBe(200);
    expect(listedForAdmin.body.data.find((s) => s.id === streamId)).toMatchObject({ clientId: receiver.clientId, deliveryMethod: POLL, status: "paused", reason: "maintenance", subjects: 0, waitingEvents: 0 });
    expect(JSON.stringify(listedForAdmin.body)).not.toContain("s3cret");

    const stranger = await receiverClient(porta.services.db.prisma, api, issuer, org.id, resourceId);
    expect((await stranger.call("GET", `/streams?stream_id=${streamId}`)).status).toBe(404);
    expect((await stranger.call("PATCH", "/streams", { stream_id: streamId, events_requested: [] })).status).toBe(404);
    expect((await stranger.call("DELETE", `/streams?stream_id=${streamId}`)).status).toBe(404);
    expect((await stranger.call("GET", `/status?stream_id=${streamId}`)).status).toBe(404);
    expect((await stranger.call("POST", "/subjects/add", { stream_id: streamId, subject: { format: "email", email: "a@example.com" } })).status).toBe(404);
    expect((await stranger.call<unknown[]>("GET", "/streams")).body).toEqual([]);

    expect((await receiver.call("DELETE", `/streams?stream_id=${streamId}`)).status).toBe(204);
    expect((await receiver.call("GET", `/streams?stream_id=${streamId}`)).status).toBe(404);
    const audit = await porta.services.db.prisma.auditEntry.findMany({ where: { targetId: streamId }, orderBy: { createdAt: "asc" } });
    expect(audit.map((e) => e.eventType)).toEqual(["ssf_stream.created", "ssf_stream.updated", "ssf_stream.updated", "ssf_stream.updated", "ssf_stream.deleted"]);
    expect(audit.every((e) => e.actorType === "client" && e.actorId === receiver.clientId)).toBe(true);
    expect(JSON.stringify(audit)).not.toContain("s3cret");
  });
});

describe("push delivery", () => {
  it("sends a verification event with the receiver's state, signed and verifiable, with the stream's Authorization", async () => {
    const streamId = await pushStream("/verify");
    expect((await receiver.call("POST", "/verify", { stream_id: streamId, state: "xyz-123" })).status).toBe(204);
    await eventually(async () => at("/verify").length, (n) => n >= 1);
    const [set] = await setsAt("/verify");
    expect(set!.events[VERIFICATION]).toEqual({ state: "xyz-123" });
    expect(set!.sub_id).toEqual({ format: "opaque", id: streamId });
    const request = at("/verify")[0]!;
    expect(request.headers["content-type"]).toBe("application/secevent+jwt");
    expect(request.headers.authorization).toBe("Bearer receiver-secret");
    expect(request.headers["user-agent"]).toBe("Porta-Shared-Signals/1");
  });

  it("tells a stream of its subjects only: deactivation, reactivation and session revocation, each a SET about that user", async () => {
    const prisma = porta.services.db.prisma;
    const watched = await createUser(prisma, org.id);
    const unwatched = await createUser(prisma, org.id);
    const streamId = await pushStream("/subjects");
    await subject(streamId, { format: "iss_sub", iss: issuer, sub: watched.id });

    expect((await api.post(`/organizations/${org.id}/users/${unwatched.id}/deactivate`)).status).toBe(200);
    expect((await api.post(`/organizations/${org.id}/users/${watched.id}/deactivate`)).status).toBe(200);
    expect((await api.post(`/organizations/${org.id}/users/${watched.id}/activate`)).status).toBe(200);
    expect((await api.delete(`/users/${watched.id}/sessions`)).status).toBe(204);
    await eventually(async () => at("/subjects").length, (n) => n >= 3);
    await sleep(500);
    const sets = await setsAt("/subjects");
    expect(sets.map((s) => Object.keys(s.events)[0])).toEqual([`${RISC}account-disabled`, `${RISC}account-enabled`, `${CAEP}session-revoked`]);
    for (const set of sets) {
      expect(set.sub_id).toEqual({ format: "iss_sub", iss: issuer, sub: watched.id });
      expect(set.aud).toBe(receiver.clientId);
      expect(set.txn).toBeTruthy();
    }
    expect(sets[2]!.events[`${CAEP}session-revoked`]).toMatchObject({ initiating_entity: "admin", event_timestamp: expect.any(Number) });
    expect(new Set(sets.map((s) => s.jti)).size).toBe(3);
    const rows = await prisma.ssfEvent.findMany({ where: { streamId } });
    expect(rows.map((r) => r.status)).toEqual(["delivered", "delivered", "delivered"]);
  });

  it("tells of a sign-out at the end-session endpoint as session-revoked, initiated by the user", async () => {
    const prisma = porta.services.db.prisma;
    const user = await createUser(prisma, org.id);
    const streamId = await pushStream("/sign-out", [`${CAEP}session-revoked`]);
    await subject(streamId, { format: "iss_sub", iss: issuer, sub: user.id });
    const { client, secret } = await createClient(prisma, org.id, { postLogoutRedirectUris: ["https://rp.example.com/logged-out"] });
    const config = await clientConfiguration(porta, org, client, { secret: secret!.value });
    const jar = new CookieJar();
    const tokens = await codeFlow(porta, org, config, { accountId: user.id, scope: "openid", redirectUri: "https://rp.example.com/cb", jar });
    const page = await jar.fetch(oidc.buildEndSessionUrl(config, { id_token_hint: tokens.id_token!, post_logout_redirect_uri: "https://rp.example.com/logged-out" }));
    const html = await page.text();
    const form = /<form id="op\.logoutForm" method="post" action="([^"]+)">(.*?)<\/form>/s.exec(html)!;
    const fields = Object.fromEntries([...form[2]!.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)"\/?>/g)].map((m) => [m[1]!, m[2]!]));
    const confirmed = await jar.fetch(form[1]!.replace(/&amp;/g, "&"), { method: "POST", headers: { "content-type": "application/x-www-form-urlencoded" }, body: new URLSearchParams(fields) });
    expect(confirmed.status).toBe(303);
    const entry = await prisma.auditEntry.findFirstOrThrow({ where: { eventType: "auth.logout", targetId: user.id } });
    expect(entry).toMatchObject({ actorType: "user", actorId: user.id, data: { clientId: client.id, allClients: true } });
    await eventually(async () => at("/sign-out").length, (n) => n >= 1);
    const [set] = await setsAt("/sign-out");
    expect(set!.events[`${CAEP}session-revoked`]).toMatchObject({ initiating_entity: "user" });
    expect(set!.sub_id).toEqual({ format: "iss_sub", iss: issuer, sub: user.id });
  });

  it("names a subject added by email by its email, and tells of the account's deletion once its row is gone", async () => {
    const prisma = porta.services.db.prisma;
    const user = await createUser(prisma, org.id);
    const streamId = await pushStream("/purged", [`${RISC}account-purged`]);
    await subject(streamId, { format: "email", email: user.email.toUpperCase() });
    expect((await api.delete(`/organizations/${org.id}/users/${user.id}`)).status).toBe(204);
    await eventually(async () => at("/purged").length, (n) => n >= 1);
    const [set] = await setsAt("/purged");
    expect(set!.events).toEqual({ [`${RISC}account-purged`]: {} });
    expect(set!.sub_id).toEqual({ format: "email", email: user.email.toUpperCase() });
  });

  it("retries a receiver that answers 500, one that is down and one that is too slow, and delivers each once it answers 202", async () => {
    const prisma = porta.services.db.prisma;
    const user = await createUser(prisma, org.id);
    endpoint.script("/flaky", [500, 500, 202]);
    endpoint.script("/slow", [0, 202]);
    const flaky = await pushStream("/flaky", [`${RISC}account-disabled`]);
    const slow = await pushStream("/slow", [`${RISC}account-disabled`]);
    // A receiver that is down: nothing listens on its port until it comes back.
    const down = await startReceiver();
    const downUrl = down.url("/down");
    await down.close();
    const downStream = (await receiver.call<{ stream_id: string }>("POST", "/streams", { delivery: { method: PUSH, endpoint_url: downUrl }, events_requested: [`${RISC}account-disabled`] })).body.stream_id;
    for (const id of [flaky, slow, downStream]) await subject(id, { format: "iss_sub", iss: issuer, sub: user.id });

    expect((await api.post(`/organizations/${org.id}/users/${user.id}/deactivate`)).status).toBe(200);
    const rows = async (streamId: string) => prisma.ssfEvent.findMany({ where: { streamId } });
    const flakyRows = await eventually(() => rows(flaky), (r) => r[0]?.status === "delivered", 20_000);
    expect(flakyRows[0]).toMatchObject({ status: "delivered", attempts: 3 });
    expect(at("/flaky")).toHaveLength(3);
    // Every attempt carried the same token.
    expect(new Set(at("/flaky").map((r) => r.body)).size).toBe(1);

    const downRows = await eventually(() => rows(downStream), (r) => r[0]?.status === "retrying", 10_000);
    expect(downRows[0]!.lastError).toBe("ECONNREFUSED");
    // The receiver comes back on its port before the retries run out.
    const back = await startReceiverOn(new URL(downUrl).port);
    try {
      await eventually(() => rows(downStream), (r) => r[0]?.status === "delivered", 10_000);
      expect(back.received).toHaveLength(1);
      const set = await verifySet(issuer, back.received[0]!.body, receiver.clientId);
      expect(Object.keys(set.events)).toEqual([`${RISC}account-disabled`]);
    } finally {
      await back.close();
    }

    const slowRows = await eventually(() => rows(slow), (r) => r[0]?.status === "delivered", 25_000);
    expect(slowRows[0]).toMatchObject({ status: "delivered", attempts: 2 });
  }, 60_000);

  it("gives up on a SET the receiver refuses with 400, without retrying it", async () => {
    const prisma = porta.services.db.prisma;
    const user = await createUser(prisma, org.id);
    endpoint.script("/refuses", [400]);
    const streamId = await pushStream("/refuses", [`${RISC}account-disabled`]);
    await subject(streamId, { format: "iss_sub", iss: issuer, sub: user.id });
    expect((await api.post(`/organizations/${org.id}/users/${user.id}/deactivate`)).status).toBe(200);
    const rows = await eventually(() => prisma.ssfEvent.findMany({ where: { streamId } }), (r) => r[0]?.status === "dead", 10_000);
    // The scripted 400's body is text, not RFC 8935's JSON error: the reason is its status.
    expect(rows[0]).toMatchObject({ status: "dead", attempts: 1, lastError: "HTTP_400" });
    await sleep(2500);
    expect(at("/refuses")).toHaveLength(1);
  });
});

describe("poll delivery", () => {
  it("hands waiting SETs to the receiver's poll until it acknowledges them, and never again after", async () => {
    const prisma = porta.services.db.prisma;
    const user = await createUser(prisma, org.id);
    const created = await receiver.call<{ stream_id: string; delivery: { endpoint_url: string } }>("POST", "/streams", { delivery: { method: POLL }, events_requested: ALL_EVENTS });
    const streamId = created.body.stream_id;
    expect(created.body.delivery.endpoint_url).toBe(`${issuer}/ssf/poll/${streamId}`);
    await subject(streamId, { format: "iss_sub", iss: issuer, sub: user.id });
    expect((await api.post(`/organizations/${org.id}/users/${user.id}/deactivate`)).status).toBe(200);
    expect((await api.delete(`/users/${user.id}/sessions`)).status).toBe(204);
    expect((await receiver.call("POST", "/verify", { stream_id: streamId, state: "poll-state" })).status).toBe(204);

    const first = await receiver.call<{ sets: Record<string, string>; moreAvailable: boolean }>("POST", `/poll/${streamId}`, { maxEvents: 2, returnImmediately: true });
    expect(first.status).toBe(200);
    expect(Object.keys(first.body.sets)).toHaveLength(2);
    expect(first.body.moreAvailable).toBe(true);
    const firstSets = await Promise.all(Object.values(first.body.sets).map((t) => verifySet(issuer, t, receiver.clientId)));
    expect(firstSets.map((s) => Object.keys(s.events)[0])).toEqual([`${RISC}account-disabled`, `${CAEP}session-revoked`]);
    for (const [jti, token] of Object.entries(first.body.sets)) expect((await verifySet(issuer, token, receiver.clientId)).jti).toBe(jti);

    // Not acknowledged yet: sent again, the same tokens.
    const again = await receiver.call<{ sets: Record<string, string> }>("POST", `/poll/${streamId}`, { maxEvents: 2 });
    expect(again.body.sets).toEqual(first.body.sets);

    const acked = await receiver.call<{ sets: Record<string, string>; moreAvailable: boolean }>("POST", `/poll/${streamId}`, { ack: Object.keys(first.body.sets), maxEvents: 10 });
    expect(Object.keys(acked.body.sets)).toHaveLength(1);
    const [verification] = await Promise.all(Object.values(acked.body.sets).map((t) => verifySet(issuer, t, receiver.clientId)));
    expect(verification!.events[VERIFICATION]).toEqual({ state: "poll-state" });
    expect(acked.body.moreAvailable).toBe(false);

    const last = await receiver.call<{ sets: Record<string, string> }>("POST", `/poll/${streamId}`, { setErrs: { [verification!.jti]: { err: "invalid_request", description: "no thanks" } } });
    expect(last.body.sets).toEqual({});
    const rows = await prisma.ssfEvent.findMany({ where: { streamId }, orderBy: { createdAt: "asc" } });
    expect(rows.map((r) => r.status)).toEqual(["acknowledged", "acknowledged", "dead"]);
    expect(rows[2]!.lastError).toBe("invalid_request");
  });

  it("hands a poll stream's waiting SETs to push when the stream switches, and tells a deactivated client's stream nothing", async () => {
    const prisma = porta.services.db.prisma;
    const user = await createUser(prisma, org.id);
    const created = await receiver.call<{ stream_id: string }>("POST", "/streams", { delivery: { method: POLL }, events_requested: [`${RISC}account-disabled`, `${RISC}account-enabled`] });
    const streamId = created.body.stream_id;
    await subject(streamId, { format: "iss_sub", iss: issuer, sub: user.id });
    expect((await api.post(`/organizations/${org.id}/users/${user.id}/deactivate`)).status).toBe(200);
    expect((await receiver.call("PATCH", "/streams", { stream_id: streamId, delivery: { method: PUSH, endpoint_url: endpoint.url("/switched") } })).status).toBe(200);
    await eventually(async () => at("/switched").length, (n) => n >= 1);
    expect(Object.keys((await setsAt("/switched"))[0]!.events)).toEqual([`${RISC}account-disabled`]);

    // The receiver's client is deactivated: its streams hear of nothing more.
    const other = await receiverClient(prisma, api, issuer, org.id, resourceId);
    const quiet = await pushStream("/deactivated-client", [`${RISC}account-enabled`], other);
    await subject(quiet, { format: "iss_sub", iss: issuer, sub: user.id }, other);
    await prisma.client.update({ where: { id: other.clientId }, data: { status: "inactive" } });
    expect((await api.post(`/organizations/${org.id}/users/${user.id}/activate`)).status).toBe(200);
    await eventually(async () => at("/switched").length, (n) => n >= 2);
    expect(await prisma.ssfEvent.count({ where: { streamId: quiet } })).toBe(0);
    expect(at("/deactivated-client")).toHaveLength(0);
  });

  it("stops retrying a SET once the receiver's client is deactivated", async () => {
    const prisma = porta.services.db.prisma;
    const user = await createUser(prisma, org.id);
    const other = await receiverClient(prisma, api, issuer, org.id, resourceId);
    endpoint.script("/then-deactivated", [500]);
    const streamId = await pushStream("/then-deactivated", [`${RISC}account-disabled`], other);
    await subject(streamId, { format: "iss_sub", iss: issuer, sub: user.id }, other);
    expect((await api.post(`/organizations/${org.id}/users/${user.id}/deactivate`)).status).toBe(200);
    await eventually(() => prisma.ssfEvent.findMany({ where: { streamId } }), (r) => r[0]?.status === "retrying", 10_000);
    await prisma.client.update({ where: { id: other.clientId }, data: { status: "inactive" } });
    const rows = await eventually(() => prisma.ssfEvent.findMany({ where: { streamId } }), (r) => r[0]?.status === "dead", 10_000);
    expect(rows[0]).toMatchObject({ status: "dead", lastError: "client_inactive", attempts: 1 });
    expect(at("/then-deactivated")).toHaveLength(1);
  });

  it("holds the events of a paused push stream and sends them once it is enabled again", async () => {
    const prisma = porta.services.db.prisma;
    const user = await createUser(prisma, org.id);
    const streamId = await pushStream("/paused", [`${RISC}account-disabled`]);
    await subject(streamId, { format: "iss_sub", iss: issuer, sub: user.id });
    expect((await receiver.call("POST", "/status", { stream_id: streamId, status: "paused" })).status).toBe(200);
    expect((await api.post(`/organizations/${org.id}/users/${user.id}/deactivate`)).status).toBe(200);
    await sleep(1500);
    expect(at("/paused")).toHaveLength(0);
    expect((await prisma.ssfEvent.findMany({ where: { streamId } })).map((r) => r.status)).toEqual(["pending"]);
    expect((await receiver.call("POST", "/status", { stream_id: streamId, status: "enabled" })).status).toBe(200);
    await eventually(async () => at("/paused").length, (n) => n >= 1);
    const [set] = await setsAt("/paused");
    expect(Object.keys(set!.events)).toEqual([`${RISC}account-disabled`]);
  });
});

/** A receiver on a given port (one that was down comes back where it was). */
async function startReceiverOn(port: string) {
  const { createServer } = await import("node:http");
  const received: Array<{ body: string }> = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      received.push({ body: Buffer.concat(chunks).toString("utf8") });
      res.writeHead(202).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(Number(port), "127.0.0.1", resolve));
  return {
    received,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
