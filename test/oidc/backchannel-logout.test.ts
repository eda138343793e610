import { createServer, type Server } from "node:http";
import { decodeProtectedHeader } from "jose";
import * as oidc from "openid-client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { NO_REQUEST, systemActor } from "~/.server/auth/actors";
import { completePasswordReset, findResetLink } from "~/.server/auth/password-reset";
import { stagedContext } from "~/.server/context";
import { obtainAdminTokens, adminApi } from "../support/admin-api";
import { createClient, createOrganization, createUser } from "../support/factories";
import { clientConfiguration, codeFlow, CookieJar, issuerOf, verifyWithJwks, type OrgRef } from "../support/oidc";
import { freePort, startTestPorta, type TestPorta } from "../support/porta";

/**
 * OpenID Back-Channel Logout 1.0 (decision 048): a receiver in the test plays the relying
 * party's back channel and validates each logout token as §2.6 asks: signature by the
 * organization's JWKS, iss, aud = the client, iat, jti, the events claim, sid and/or sub, no nonce.
 */
const EVENT = "http://schemas.openid.net/event/backchannel-logout";
const CB = "https://rp.example.com/cb";

interface Received {
  path: string;
  token: string;
  status: number;
}

let porta: TestPorta;
let org: OrgRef;
let receiver: Server;
let receiverUrl: string;
const received: Received[] = [];
/** Status codes the receiver answers with, in turn; 200 once they are used up. */
const answers = new Map<string, number[]>();

beforeAll(async () => {
  const port = await freePort();
  receiver = createServer((req, res) => {
    let body = "";
    req.on("data", (chunk: Buffer) => (body += chunk.toString("utf8")));
    req.on("end", () => {
      const path = req.url ?? "/";
      const token = new URLSearchParams(body).get("logout_token");
      const status = answers.get(path)?.shift() ?? 200;
      if (req.method === "POST" && req.headers["content-type"]?.startsWith("application/x-www-form-urlencoded") && token) received.push({ path, token, status });
      res.writeHead(status, { "cache-control": "no-store" }).end();
    });
  });
  await new Promise<void>((resolve) => receiver.listen(port, "127.0.0.1", resolve));
  receiverUrl = `http://localhost:${port}`;
  porta = await startTestPorta({
    // The receiver is on loopback: only an operator's OUTBOUND_ALLOW_PRIVATE_NETWORKS lets Porta reach it.
    env: { OUTBOUND_ALLOW_PRIVATE_NETWORKS: "true" },
    queue: { retrySchedules: { "backchannel-logout": [1, 1, 1] }, pollingIntervalSeconds: 1 },
  });
  org = await createOrganization(porta.services.db.prisma);
});
afterAll(async () => {
  await porta?.stop();
  await new Promise((resolve) => receiver?.close(resolve));
});

/** A confidential client whose back channel is `path` on the receiver (or none). */
async function clientWithBackChannel(path: string | null, sessionRequired = false) {
  const prisma = porta.services.db.prisma;
  const created = await createClient(prisma, org.id, { postLogoutRedirectUris: ["https://rp.example.com/bye"] });
  if (path) await prisma.client.update({ where: { id: created.client.id }, data: { backchannelLogoutUri: `${receiverUrl}${path}`, backchannelLogoutSessionRequired: sessionRequired } });
  const config = await clientConfiguration(porta, org, created.client, { secret: created.secret!.value });
  return { clientId: created.client.id, config };
}

async function tokensAt(path: string, count: number, timeoutMs = 15_000) {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const found = received.filter((r) => r.path === path && r.status === 200);
    if (found.length >= count) return found;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`expected ${count} logout token(s) at ${path}, got ${received.filter((r) => r.path === path).length}`);
}

/** Validates a logout token as a relying party must (Back-Channel Logout §2.6) and returns its claims. */
async function validLogoutToken(token: string, clientId: string) {
  const { payload, protectedHeader } = await verifyWithJwks(porta, org, token, { audience: clientId, typ: "logout+jwt" });
  expect(protectedHeader.alg).toBe("ES256");
  expect(decodeProtectedHeader(token).kid).toBeTruthy();
  expect(payload.iss).toBe(issuerOf(porta, org));
  expect(typeof payload.iat).toBe("number");
  expect(typeof payload.jti).toBe("string");
  expect(payload.events).toEqual({ [EVENT]: {} });
  expect(payload).not.toHaveProperty("nonce");
  expect(payload.sub ?? payload.sid).toBeTruthy();
  return payload;
}

async function signIn(config: oidc.Configuration, accountId: string) {
  const jar = new CookieJar();
  const tokens = await codeFlow(porta, org, config, { accountId, scope: "openid email", redirectUri: CB, jar });
  return { jar, tokens };
}

/** The person confirms the sign-out on Porta's page (RP-initiated logout). */
async function signOut(jar: CookieJar, config: oidc.Configuration, idToken: string) {
  const page = await jar.fetch(oidc.buildEndSessionUrl(config, { id_token_hint: idToken }));
  const html = await page.text();
  const xsrf = /name="xsrf" value="([^"]+)"/.exec(html)?.[1];
  const action = /<form id="op\.logoutForm" method="post" action="([^"]+)"/.exec(html)?.[1]?.replace(/&amp;/g, "&");
  if (!xsrf || !action) throw new Error("no logout form");
  const confirmed = await jar.fetch(action, { method: "POST", headers: { "content-type": "application/x-www-form-urlencoded" }, body: new URLSearchParams({ xsrf, logout: "yes" }) });
  expect(confirmed.status).toBe(303);
}

const jobsFor = async (clientId: string) =>
  (
    await porta.services.db.prisma.$queryRaw<Array<{ n: number }>>`SELECT count(*)::int AS n FROM pgboss.job WHERE name LIKE 'backchannel-logout%' AND data->>'clientId' = ${clientId}`
  )[0]!.n;

describe("back-channel logout", () => {
  it("discovery says it is supported, with sessions", async () => {
    const response = await fetch(`${issuerOf(porta, org)}/.well-known/openid-configuration`);
    const discovery = (await response.json()) as Record<string, unknown>;
    expect(discovery.backchannel_logout_supported).toBe(true);
    expect(discovery.backchannel_logout_session_supported).toBe(true);
  });

  it("a sign-out at end_session sends the client a logout token with the session's sid and the user", async () => {
    const { clientId, config } = await clientWithBackChannel("/end-session", true);
    const userId = (await createUser(porta.services.db.prisma, org.id)).id;
    const { jar, tokens } = await signIn(config, userId);
    const sid = tokens.claims()!.sid;
    expect(typeof sid).toBe("string");
    await signOut(jar, config, tokens.id_token!);
    const [delivered] = await tokensAt("/end-session", 1);
    const claims = await validLogoutToken(delivered!.token, clientId);
    expect(claims.sub).toBe(userId);
    expect(claims.sid).toBe(sid);
  });

  it("an administrator ending a user's sessions tells every client of them", async () => {
    const { clientId, config } = await clientWithBackChannel("/admin-revoke", true);
    const userId = (await createUser(porta.services.db.prisma, org.id)).id;
    const { tokens } = await signIn(config, userId);
    const admin = await obtainAdminTokens(porta);
    const revoked = await adminApi(porta, admin.accessToken).delete(`/users/${userId}/sessions`);
    expect(revoked.status).toBe(204);
    const [delivered] = await tokensAt("/admin-revoke", 1);
    const claims = await validLogoutToken(delivered!.token, clientId);
    expect(claims.sub).toBe(userId);
    expect(claims.sid).toBe(tokens.claims()!.sid);
  });

  it("an administrator revoking one session (grant) tells its client", async () => {
    const { clientId, config } = await clientWithBackChannel("/admin-revoke-one");
    const userId = (await createUser(porta.services.db.prisma, org.id)).id;
    await signIn(config, userId);
    const api = adminApi(porta, (await obtainAdminTokens(porta)).accessToken);
    const listed = await api.get<{ data: Array<{ id: string; clientId: string }> }>(`/sessions?userId=${userId}`);
    const grant = listed.body.data.find((s) => s.clientId === clientId)!;
    expect((await api.delete(`/sessions/${grant.id}`)).status).toBe(204);
    const [delivered] = await tokensAt("/admin-revoke-one", 1);
    const claims = await validLogoutToken(delivered!.token, clientId);
    expect(claims.sub).toBe(userId);
  });

  it("a completed password reset ends the sessions and tells their clients", async () => {
    const { clientId, config } = await clientWithBackChannel("/reset");
    const prisma = porta.services.db.prisma;
    const user = await createUser(prisma, org.id);
    await signIn(config, user.id);
    const token = porta.services.tokens.derive("password-reset", `backchannel-${user.id}`);
    await prisma.passwordResetToken.create({
      data: { jobId: `backchannel-${user.id}`, tokenHash: porta.services.tokens.hash(token), organizationId: org.id, userId: user.id, clientId, expiresAt: new Date(Date.now() + 3_600_000) },
    });
    const ctx = stagedContext(porta.services, systemActor(null));
    const link = await findResetLink(ctx, org.slug, token);
    if (link.status !== "usable") throw new Error(`reset link is ${link.status}`);
    const outcome = await completePasswordReset(ctx, { row: link.row, organizationName: "Test", newPassword: "a brand new passphrase 4 reset", meta: NO_REQUEST });
    expect(outcome.ok).toBe(true);
    const [delivered] = await tokensAt("/reset", 1);
    const claims = await validLogoutToken(delivered!.token, clientId);
    expect(claims.sub).toBe(user.id);
    // Not asked for by this client (backchannel_logout_session_required false): the user alone.
    expect(claims).not.toHaveProperty("sid");
  });

  it("tries again when the receiver answers 500, with a new token", async () => {
    const { clientId, config } = await clientWithBackChannel("/flaky");
    answers.set("/flaky", [500, 500]);
    const userId = (await createUser(porta.services.db.prisma, org.id)).id;
    const { jar, tokens } = await signIn(config, userId);
    await signOut(jar, config, tokens.id_token!);
    const [delivered] = await tokensAt("/flaky", 1, 30_000);
    expect(answers.get("/flaky")).toEqual([]);
    const claims = await validLogoutToken(delivered!.token, clientId);
    expect(claims.sub).toBe(userId);
    // Each attempt carried a token of its own.
    const attempts = received.filter((r) => r.path === "/flaky");
    expect(attempts.map((r) => r.status)).toEqual([500, 500, 200]);
    const jtis = await Promise.all(attempts.map(async (r) => (await validLogoutToken(r.token, clientId)).jti));
    expect(new Set(jtis).size).toBe(3);
  });

  it("a client without a backchannel_logout_uri gets nothing", async () => {
    const withUri = await clientWithBackChannel("/neighbour");
    const without = await clientWithBackChannel(null);
    const userId = (await createUser(porta.services.db.prisma, org.id)).id;
    await signIn(withUri.config, userId);
    await signIn(without.config, userId);
    const admin = await obtainAdminTokens(porta);
    expect((await adminApi(porta, admin.accessToken).delete(`/users/${userId}/sessions`)).status).toBe(204);
    await tokensAt("/neighbour", 1);
    expect(await jobsFor(withUri.clientId)).toBeGreaterThan(0);
    expect(await jobsFor(without.clientId)).toBe(0);
  });
});

describe("the Admin API", () => {
  it("stores a client's back channel and refuses one that is not a URL", async () => {
    const admin = await obtainAdminTokens(porta);
    const api = adminApi(porta, admin.accessToken);
    const created = await api.post<Record<string, unknown>>("/clients", {
      organizationId: org.id,
      name: "Back channel",
      clientType: "confidential",
      redirectUris: [CB],
      backchannelLogoutUri: "https://rp.example.com/backchannel",
      backchannelLogoutSessionRequired: true,
    });
    expect(created.status).toBe(201);
    expect(created.body.backchannelLogoutUri).toBe("https://rp.example.com/backchannel");
    expect(created.body.backchannelLogoutSessionRequired).toBe(true);
    const refused = await api.post<{ error: { details?: Array<{ field: string }> } }>("/clients", {
      organizationId: org.id,
      name: "Bad back channel",
      clientType: "confidential",
      redirectUris: [CB],
      backchannelLogoutUri: "http://rp.example.com/backchannel#frag",
    });
    expect(refused.status).toBe(422);
    expect(JSON.stringify(refused.body)).toContain("backchannelLogoutUri");
  });
});
