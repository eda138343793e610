import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { currentTotpCode } from "~/.server/auth/two-factor/totp";
import { adminApi, obtainAdminTokens } from "../support/admin-api";
import { issuerOf } from "../support/oidc";
import { startTestPorta, type TestPorta } from "../support/porta";
import { eventually, sleep } from "../email/helpers";
import { startReceiver, type Receiver as Endpoint } from "../webhooks/helpers";
import { createAccountTenant, createAccountUser, openAccount, postAccount, signInToAccount, type AccountTenant } from "../account/helpers";
import { expect422 } from "../admin/helpers";
import { CAEP, PUSH, receiverClient, RISC, verifySet, type Receiver, type Set } from "./helpers";

/**
 * The two Shared Signals events Porta emits from what administrators and people do to
 * credentials (decision 093): RISC credential-compromise when an administrator reports a user's
 * password compromised (the password goes and the sessions end in the same write), and CAEP
 * assurance-level-change (NIST-AAL) when a person's first second factor is added or their last
 * one removed. The receiver verifies every SET with jsonwebtoken.
 */
let porta: TestPorta;
let endpoint: Endpoint;
let api: ReturnType<typeof adminApi>;
let tenant: AccountTenant;
let issuer: string;
let receiver: Receiver;

beforeAll(async () => {
  endpoint = await startReceiver();
  porta = await startTestPorta({ env: { OUTBOUND_ALLOW_PRIVATE_NETWORKS: "true" }, queue: { retrySchedules: { "ssf-push": [1, 1, 1] } } });
  api = adminApi(porta, (await obtainAdminTokens(porta)).accessToken);
  tenant = await createAccountTenant(porta);
  issuer = issuerOf(porta, tenant.org);
  const resource = await api.post<{ id: string }>(`/organizations/${tenant.org.id}/api-resources`, { identifier: `${issuer}/ssf`, name: "Shared Signals", scopes: ["ssf.manage"] });
  expect(resource.status, JSON.stringify(resource.body)).toBe(201);
  receiver = await receiverClient(porta.services.db.prisma, api, issuer, tenant.org.id, resource.body.id);
}, 120_000);
afterAll(async () => {
  await porta?.stop();
  await endpoint?.close();
});

const COMPROMISE = `${RISC}credential-compromise`;
const ASSURANCE = `${CAEP}assurance-level-change`;
const CHANGE = `${CAEP}credential-change`;
const REVOKED = `${CAEP}session-revoked`;

async function watch(path: string, events: string[], userId: string) {
  const created = await receiver.call<{ stream_id: string; events_delivered: string[] }>("POST", "/streams", {
    delivery: { method: PUSH, endpoint_url: endpoint.url(path), authorization_header: "Bearer receiver-secret" },
    events_requested: events,
  });
  expect(created.status, JSON.stringify(created.body)).toBe(201);
  expect([...created.body.events_delivered].sort()).toEqual([...events].sort());
  const added = await receiver.call("POST", "/subjects/add", { stream_id: created.body.stream_id, subject: { format: "iss_sub", iss: issuer, sub: userId } });
  expect(added.status).toBe(200);
}

/** The SETs a path received, verified, in the order they were written (the jti is a UUIDv7). */
async function setsAt(path: string, count: number): Promise<Set[]> {
  await eventually(async () => endpoint.received.filter((r) => r.path === path).length, (n) => n >= count);
  await sleep(700);
  const sets = await Promise.all(endpoint.received.filter((r) => r.path === path).map((r) => verifySet(issuer, r.body, receiver.clientId)));
  return sets.sort((a, b) => a.jti.localeCompare(b.jti));
}

const eventOf = (set: Set) => {
  expect(Object.keys(set.events)).toHaveLength(1);
  return Object.keys(set.events)[0]!;
};

describe("a password reported compromised", () => {
  it("refuses a note over 500 characters with 422 and changes nothing", async () => {
    const user = await createAccountUser(porta, tenant);
    const refused = await api.post(`/organizations/${tenant.org.id}/users/${user.id}/password-compromised`, { reason: "x".repeat(501) });
    expect422(refused, "reason");
    expect((await api.get<{ hasPassword: boolean }>(`/organizations/${tenant.org.id}/users/${user.id}`)).body.hasPassword).toBe(true);
    expect(await porta.services.db.prisma.auditEntry.count({ where: { targetId: user.id, eventType: "user.credential_compromised" } })).toBe(0);
  });

  it("removes the password, ends the person's sessions, and tells the receiver credential-compromise with the note", async () => {
    const prisma = porta.services.db.prisma;
    const user = await createAccountUser(porta, tenant);
    const signedIn = await signInToAccount(tenant, user.email);
    await watch("/compromised", [COMPROMISE, REVOKED], user.id);
    const reason = "Found in a breach corpus, ticket SEC-4411";

    const reported = await api.post<{ hasPassword: boolean }>(`/organizations/${tenant.org.id}/users/${user.id}/password-compromised`, { reason });
    expect(reported.status, JSON.stringify(reported.body)).toBe(200);
    expect(reported.body.hasPassword).toBe(false);
    expect((await api.get<{ hasPassword: boolean }>(`/organizations/${tenant.org.id}/users/${user.id}`)).body.hasPassword).toBe(false);
    // The session the person had is over: the account page sends them to sign in again.
    expect((await signedIn.browser.get(tenant.accountUrl)).status).toBe(302);
    // And the old password no longer signs in.
    await expect(signInToAccount(tenant, user.email)).rejects.toThrow();

    const entry = await prisma.auditEntry.findFirstOrThrow({ where: { targetId: user.id, eventType: "user.credential_compromised" } });
    expect(entry).toMatchObject({ actorType: "admin", targetType: "user", data: { credentialType: "password", reason } });

    // A stream that asked for credential-compromise and session-revoked hears both, one SET each; not the credential-change it did not ask for.
    const sets = await setsAt("/compromised", 2);
    expect(sets).toHaveLength(2);
    expect(sets.map(eventOf)).toEqual([COMPROMISE, REVOKED]);
    expect(sets[0]!.events[COMPROMISE]).toEqual({ credential_type: "password", event_timestamp: expect.any(Number), reason_admin: { und: reason } });
    expect(sets[1]!.events[REVOKED]).toMatchObject({ initiating_entity: "admin" });
    for (const set of sets) expect(set.sub_id).toEqual({ format: "iss_sub", iss: issuer, sub: user.id });
    expect(sets[0]!.txn).toBe(sets[1]!.txn);
    expect(new Set(sets.map((s) => s.jti)).size).toBe(2);
  });
});

describe("the assurance level a person can reach", () => {
  it("rises with the first second factor, stays with the second, and falls when the last one goes", async () => {
    const user = await createAccountUser(porta, tenant);
    await watch("/assurance", [ASSURANCE, CHANGE], user.id);
    const page = await signInToAccount(tenant, user.email);

    // The first factor: an authenticator app set up on the account page.
    const setupUrl = `${tenant.accountUrl}/two-factor`;
    const html = await (await page.browser.get(setupUrl)).text();
    const secret = /data-testid="totp-secret">([^<]+)</.exec(html)![1]!.replace(/\s+/g, "");
    expect((await page.browser.post(setupUrl, { csrf: page.csrf, code: currentTotpCode(secret) })).status).toBe(200);
    const afterTotp = await setsAt("/assurance", 2);
    expect(afterTotp.map(eventOf)).toEqual([CHANGE, ASSURANCE]);
    expect(afterTotp[0]!.events[CHANGE]).toMatchObject({ credential_type: "app", change_type: "create" });
    expect(afterTotp[1]!.events[ASSURANCE]).toEqual({
      event_timestamp: expect.any(Number),
      initiating_entity: "user",
      namespace: "NIST-AAL",
      current_level: "nist-aal2",
      previous_level: "nist-aal1",
      change_direction: "increase",
    });

    // A second factor (email codes): a credential-change, the level is the same.
    const on = await postAccount(tenant, await openAccount(tenant, page.browser), { intent: "email-codes", value: "on" });
    expect(on.status).toBe(303);
    // Removing the app while email codes remain: the level is still the same.
    const removed = await postAccount(tenant, await openAccount(tenant, page.browser), { intent: "totp-remove" });
    expect(removed.status).toBe(303);
    const meanwhile = await setsAt("/assurance", 4);
    expect(meanwhile.map(eventOf)).toEqual([CHANGE, ASSURANCE, CHANGE, CHANGE]);
    expect(meanwhile[3]!.events[CHANGE]).toMatchObject({ credential_type: "app", change_type: "delete" });

    // An administrator turns two-factor off: the last factor is gone.
    expect((await api.delete(`/users/${user.id}/two-factor`)).status).toBe(200);
    const all = await setsAt("/assurance", 6);
    expect(all.map(eventOf)).toEqual([CHANGE, ASSURANCE, CHANGE, CHANGE, CHANGE, ASSURANCE]);
    expect(all[5]!.events[ASSURANCE]).toMatchObject({ initiating_entity: "admin", current_level: "nist-aal1", previous_level: "nist-aal2", change_direction: "decrease" });
    expect(all[4]!.txn).toBe(all[5]!.txn);

    // A reset with nothing left to remove is a credential-change, and the level does not fall again.
    expect((await api.post(`/users/${user.id}/two-factor/reset`)).status).toBe(200);
    const last = await setsAt("/assurance", 7);
    expect(last.map(eventOf)).toEqual([CHANGE, ASSURANCE, CHANGE, CHANGE, CHANGE, ASSURANCE, CHANGE]);
  });
});
