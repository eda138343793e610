import { afterAll, beforeAll, expect, it } from "vitest";
import { adminApi, obtainAdminTokens } from "../support/admin-api";
import { createOrganization, createUser } from "../support/factories";
import { issuerOf, type OrgRef } from "../support/oidc";
import { startTestPorta, type TestPorta } from "../support/porta";
import { POLL, PUSH, receiverClient, RISC, type Receiver } from "./helpers";

/**
 * What a receiver may not make the Shared Signals transmitter do (decision 093), with Porta as
 * production runs it (OUTBOUND_ALLOW_PRIVATE_NETWORKS unset): push to plain http or to a private,
 * loopback or special-use address; store a subject of an unknown format, with members missing or
 * extra, too long, or with text PostgreSQL cannot hold; or send bodies too large, too deep or not
 * JSON. Each is a 4xx with an error that says why, and nothing is written. Nor may it call the
 * endpoints without end (rateLimits.ssf.*).
 */
let porta: TestPorta;
let org: OrgRef;
let issuer: string;
let receiver: Receiver;
let pollStream: string;
let api: ReturnType<typeof adminApi>;

beforeAll(async () => {
  porta = await startTestPorta({ env: { OUTBOUND_ALLOW_PRIVATE_NETWORKS: undefined } });
  api = adminApi(porta, (await obtainAdminTokens(porta)).accessToken);
  const prisma = porta.services.db.prisma;
  org = await createOrganization(prisma);
  issuer = issuerOf(porta, org);
  const resource = await api.post<{ id: string }>(`/organizations/${org.id}/api-resources`, { identifier: `${issuer}/ssf`, name: "Shared Signals", scopes: ["ssf.manage"] });
  expect(resource.status, JSON.stringify(resource.body)).toBe(201);
  receiver = await receiverClient(prisma, api, issuer, org.id, resource.body.id);
  const created = await receiver.call<{ stream_id: string }>("POST", "/streams", { delivery: { method: POLL }, events_requested: [`${RISC}account-disabled`] });
  expect(created.status).toBe(201);
  pollStream = created.body.stream_id;
}, 120_000);
afterAll(async () => {
  await porta?.stop();
});

const counts = async () => {
  const prisma = porta.services.db.prisma;
  return { streams: await prisma.ssfStream.count(), subjects: await prisma.ssfSubject.count(), events: await prisma.ssfEvent.count() };
};

it("refuses push endpoints on plain http or private, loopback and special-use addresses with 400, and writes no stream", async () => {
  const before = await counts();
  for (const url of [
    "http://example.com/events",
    "https://127.0.0.1/events",
    "https://localhost:8443/events",
    "https://[::1]/events",
    "https://10.1.2.3/events",
    "https://169.254.169.254/latest/meta-data",
    "https://[::ffff:127.0.0.1]/events",
    "https://user:pass@example.com/events",
    "file:///etc/passwd",
    "not a url",
  ]) {
    const res = await receiver.call<{ error: string; error_description: string }>("POST", "/streams", { delivery: { method: PUSH, endpoint_url: url }, events_requested: [] });
    expect(res.status, url).toBe(400);
    expect(res.body.error, url).toBe("invalid_request");
    expect(res.body.error_description, url).toMatch(/^delivery\.endpoint_url: /);
    // The same refusal when an existing stream is switched to such an endpoint.
    const patched = await receiver.call("PATCH", "/streams", { stream_id: pollStream, delivery: { method: PUSH, endpoint_url: url } });
    expect(patched.status, url).toBe(400);
  }
  expect(await counts()).toEqual(before);
  const stream = await porta.services.db.prisma.ssfStream.findUniqueOrThrow({ where: { id: pollStream } });
  expect(stream.deliveryMethod).toBe(POLL);
  // A public https endpoint is taken.
  const ok = await receiver.call("POST", "/streams", { delivery: { method: PUSH, endpoint_url: "https://receiver.example.com/events" } });
  expect(ok.status).toBe(201);
});

it("refuses malformed subjects with 400 naming the member, and stores none", async () => {
  const prisma = porta.services.db.prisma;
  const user = await createUser(prisma, org.id);
  const before = await counts();
  const cases: Array<[unknown, RegExp]> = [
    [{ format: "phone_number", phone_number: "+12065550100" }, /format must be iss_sub or email/],
    [{ format: "opaque", id: "abc" }, /format must be iss_sub or email/],
    [{ email: "a@example.com" }, /format must be iss_sub or email/],
    [{ format: "email" }, /^subject\.email: /],
    [{ format: "email", email: "not-an-email" }, /^subject\.email: must be an email address/],
    [{ format: "email", email: `${"a".repeat(400)}@example.com` }, /^subject\.email: must have at most 320 characters/],
    [{ format: "email", email: "a@example.com", extra: "member" }, /^subject: /],
    [{ format: "iss_sub", iss: issuer }, /^subject\.sub: /],
    [{ format: "iss_sub", iss: "https://elsewhere.example.com", sub: user.id }, /^subject\.iss: must be this transmitter's issuer/],
    [{ format: "iss_sub", iss: issuer, sub: "x".repeat(10_000) }, /^subject\.sub: must have at most 255 characters/],
    ["a string", /format must be iss_sub or email/],
    [null, /^subject: /],
  ];
  for (const [subject, message] of cases) {
    const res = await receiver.call<{ error: string; error_description: string }>("POST", "/subjects/add", { stream_id: pollStream, subject });
    expect(res.status, JSON.stringify(subject)).toBe(400);
    expect(res.body.error_description, JSON.stringify(subject)).toMatch(message);
  }
  // NUL and a lone surrogate, as JSON escapes.
  for (const raw of [
    `{"stream_id":"${pollStream}","subject":{"format":"email","email":"a\\u0000b@example.com"}}`,
    `{"stream_id":"${pollStream}","subject":{"format":"iss_sub","iss":"${issuer}","sub":"\\ud800"}}`,
  ]) {
    const res = await receiver.call<{ error_description: string }>("POST", "/subjects/add", raw);
    expect(res.status, raw).toBe(400);
    expect(res.body.error_description).toMatch(/cannot be stored/);
  }
  // A stream id that is no id, or another's, is the same 404 as an unknown one.
  expect((await receiver.call("POST", "/subjects/add", { stream_id: "../../etc", subject: { format: "email", email: "a@example.com" } })).status).toBe(400);
  expect((await receiver.call("POST", "/subjects/add", { stream_id: "01900000-0000-7000-8000-000000000000", subject: { format: "email", email: "a@example.com" } })).status).toBe(404);
  expect((await receiver.call("GET", "/streams?stream_id=nope")).status).toBe(404);
  expect(await counts()).toEqual(before);

  // A well-formed subject that names nobody is taken like any other (the answer tells no one who has an account).
  expect((await receiver.call("POST", "/subjects/add", { stream_id: pollStream, subject: { format: "email", email: "nobody@example.com" } })).status).toBe(200);
  expect((await receiver.call("POST", "/subjects/add", { stream_id: pollStream, subject: { format: "email", email: user.email } })).status).toBe(200);
  const stored = await prisma.ssfSubject.findMany({ where: { streamId: pollStream }, orderBy: { createdAt: "asc" } });
  expect(stored.map((s) => s.userId)).toEqual([null, user.id]);
});

it("refuses bodies that are too large, too deep, not JSON or not sent as JSON, and bad poll requests", async () => {
  const before = await counts();
  const big = await receiver.call("POST", "/streams", JSON.stringify({ delivery: { method: POLL }, description: "x".repeat(70 * 1024) }));
  expect(big.status).toBe(413);
  const deep = await receiver.call<{ error_description: string }>("POST", "/streams", `{"delivery":${"[".repeat(200)}${"]".repeat(200)}}`);
  expect(deep.status).toBe(400);
  expect(deep.body.error_description).toMatch(/levels deep/);
  const broken = await receiver.call("POST", "/streams", "{not json");
  expect(broken.status).toBe(400);
  const form = await fetch(`${issuer}/ssf/streams`, { method: "POST", headers: { authorization: `Bearer ${receiver.token}`, "content-type": "application/x-www-form-urlencoded" }, body: "delivery=x" });
  expect(form.status).toBe(415);
  const badMethod = await receiver.call<{ error_description: string }>("POST", "/streams", { delivery: { method: "urn:example:carrier-pigeon" } });
  expect(badMethod.status).toBe(400);
  expect(badMethod.body.error_description).toMatch(/delivery\.method must be/);
  for (const body of [{ maxEvents: -1 }, { maxEvents: 1.5 }, { ack: "jti" }, { setErrs: { x: { description: "no err" } } }, { ack: Array.from({ length: 1001 }, (_, i) => String(i)) }]) {
    const res = await receiver.call("POST", `/poll/${pollStream}`, body);
    expect(res.status, JSON.stringify(body)).toBe(400);
  }
  expect((await receiver.call("POST", "/status", { stream_id: pollStream, status: "deleted" })).status).toBe(400);
  expect(await counts()).toEqual(before);
});

it("answers 429 with Retry-After once a receiver used its requests in the window", async () => {
  const configured = await api.put("/config/rateLimits.ssf.perClient", { value: { points: 3, windowMinutes: 1 } });
  expect(configured.status, JSON.stringify(configured.body)).toBe(200);
  try {
    let refused: { status: number; headers: Headers; body: { error: string } } | undefined;
    for (let i = 0; i < 5 && !refused; i++) {
      const res = await receiver.call<{ error: string }>("GET", "/streams");
      if (res.status === 429) refused = res;
      else expect(res.status).toBe(200);
    }
    expect(refused?.body.error).toBe("slow_down");
    expect(Number(refused?.headers.get("retry-after"))).toBeGreaterThan(0);
  } finally {
    await api.put("/config/rateLimits.ssf.perClient", { value: { points: 300, windowMinutes: 1 } });
  }
});
