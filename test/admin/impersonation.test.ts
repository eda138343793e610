import { decodeJwt } from "jose";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { adminApi, obtainAdminTokens } from "../support/admin-api";
import { createClient, createOrganization, createUser } from "../support/factories";
import { basicAuth, issuerOf, postForm, verifyWithJwks, type OrgRef } from "../support/oidc";
import { startTestPorta, TEST_ADMIN, type TestPorta } from "../support/porta";
import { createAccountTenant, createAccountUser, signInToAccount } from "../account/helpers";
import { consoleSignIn, pageWithCsrf } from "../console/helpers";
import { withoutPermission } from "./resources";

/**
 * An administrator acts as a person (decision 053): `users.impersonate` issues a time-limited
 * access token of the person's organization whose `act` names the administrator, audited with
 * the reason; the person sees who, when and why on their account page; the console's user page
 * has the button with a reason field.
 */
interface Impersonation {
  accessToken: string;
  tokenType: string;
  expiresIn: number;
  expiresAt: string;
  clientId: string;
  scope: string;
}

let porta: TestPorta;
let api: ReturnType<typeof adminApi>;
let adminId: string;
let org: OrgRef;
let userId: string;
let clientId: string;
let clientSecret: string;

beforeAll(async () => {
  porta = await startTestPorta();
  const { accessToken } = await obtainAdminTokens(porta);
  adminId = String(decodeJwt(accessToken).sub);
  api = adminApi(porta, accessToken);
  const prisma = porta.services.db.prisma;
  org = await createOrganization(prisma);
  userId = (await createUser(prisma, org.id)).id;
  const created = await createClient(prisma, org.id, { scope: "openid profile email offline_access" });
  clientId = created.client.id;
  clientSecret = created.secret!.value;
});
afterAll(async () => {
  await porta?.stop();
});

const impersonate = (id: string, body: unknown) => api.post<Impersonation & { details?: Array<{ field: string; message: string }> }>(`/users/${id}/impersonate`, body);

describe("users.impersonate", () => {
  it("issues a time-limited token for the person at the client, naming the administrator in act", async () => {
    const answer = await impersonate(userId, { clientId, reason: "Ticket 4711: the invoice page fails for this customer", minutes: 10 });
    expect(answer.status).toBe(200);
    expect(answer.body).toMatchObject({ tokenType: "Bearer", expiresIn: 600, clientId, scope: "openid profile email" });
    const { payload } = await verifyWithJwks(porta, org, answer.body.accessToken, { audience: issuerOf(porta, org), typ: "at+jwt" });
    expect(payload).toMatchObject({ sub: userId, client_id: clientId, act: { sub: adminId } });
    expect(payload.exp! - payload.iat!).toBe(600);

    // A live token of the organization: the client's introspection says whose it is and who acts.
    const introspected = await postForm(`${issuerOf(porta, org)}/token/introspection`, { token: answer.body.accessToken }, { authorization: basicAuth(clientId, clientSecret) });
    expect(introspected.body).toMatchObject({ active: true, sub: userId, client_id: clientId, act: { sub: adminId } });

    const entry = await porta.services.db.prisma.auditEntry.findFirstOrThrow({ where: { eventType: "user.impersonated", targetId: userId } });
    expect(entry).toMatchObject({ actorType: "admin", actorId: adminId, organizationId: org.id, targetType: "user" });
    expect(entry.data).toMatchObject({ clientId, reason: "Ticket 4711: the invoice page fails for this customer", minutes: 10, adminEmail: TEST_ADMIN.email });
    expect(JSON.stringify(entry.data)).not.toContain(answer.body.accessToken.split(".")[2]);
  });

  it("refuses more than an hour, no reason, and a client of another organization with 422, issuing nothing", async () => {
    const before = await porta.services.db.prisma.auditEntry.count({ where: { eventType: "user.impersonated" } });
    const tooLong = await impersonate(userId, { clientId, reason: "support", minutes: 61 });
    expect(tooLong.status).toBe(422);
    expect(JSON.stringify(tooLong.body)).toContain('"minutes"');
    const noReason = await impersonate(userId, { clientId, minutes: 5 });
    expect(noReason.status).toBe(422);
    expect(JSON.stringify(noReason.body)).toContain('"reason"');
    const other = await createOrganization(porta.services.db.prisma);
    const foreign = (await createClient(porta.services.db.prisma, other.id)).client.id;
    const wrongClient = await impersonate(userId, { clientId: foreign, reason: "support", minutes: 5 });
    expect(wrongClient.status).toBe(422);
    expect(JSON.stringify(wrongClient.body)).toContain('"clientId"');
    expect(await porta.services.db.prisma.auditEntry.count({ where: { eventType: "user.impersonated" } })).toBe(before);
  });

  it("refuses an inactive user and an administrator (the super-admin organization) with 409", async () => {
    const inactive = (await createUser(porta.services.db.prisma, org.id, { status: "inactive" })).id;
    expect((await impersonate(inactive, { clientId, reason: "support", minutes: 5 })).status).toBe(409);
    const asAdmin = await impersonate(adminId, { clientId: "porta-admin", reason: "support", minutes: 5 });
    expect(asAdmin.status).toBe(409);
    expect(asAdmin.body).toMatchObject({ error: { code: "not_impersonable" } });
  });

  it("needs the permission admin:user:impersonate", async () => {
    await withoutPermission(porta, "admin:user:impersonate", async () => {
      const { accessToken } = await obtainAdminTokens(porta);
      const answer = await adminApi(porta, accessToken).post(`/users/${userId}/impersonate`, { clientId, reason: "support", minutes: 5 });
      expect(answer.status).toBe(403);
    });
  });
});

describe("what the person sees", () => {
  it("lists the impersonation on their account page: who, when and why", async () => {
    const tenant = await createAccountTenant(porta);
    const email = `person-${Math.random().toString(16).slice(2, 8)}@example.com`;
    const person = await createAccountUser(porta, tenant, email);
    const client = (await createClient(porta.services.db.prisma, tenant.org.id)).client.id;
    expect((await impersonate(person.id, { clientId: client, reason: "Checking the broken invoice page", minutes: 5 })).status).toBe(200);

    const page = await signInToAccount(tenant, email);
    expect(page.html).toContain("An administrator acted as you for a limited time");
    expect(page.html).toContain(`by the administrator ${TEST_ADMIN.email}`);
    expect(page.html).toContain("Reason given: Checking the broken invoice page");
  });
});

describe("the console's user page", () => {
  it("has the button with a reason field; the token is shown once, and a missing reason is said beside the field", async () => {
    const visit = await consoleSignIn(porta);
    const url = `${porta.baseUrl}/console/organizations/${org.id}/users/${userId}`;
    const { csrf, html } = await pageWithCsrf(visit.browser, url);
    expect(html).toContain("Act as this user");
    expect(html).toContain('name="reason"');

    const refused = await visit.browser.post(url, { csrf, intent: "impersonate", clientId, reason: "", minutes: "15" });
    expect(refused.status).toBe(422);
    expect(await refused.text()).toMatch(/id="reason-error"[^>]*>[^<]*at least 3 characters/);

    const issued = await visit.browser.post(url, { csrf, intent: "impersonate", clientId, reason: "Console check", minutes: "15" });
    expect(issued.status).toBe(200);
    const shown = await issued.text();
    const token = /id="impersonation-token"[^>]*>([^<]+)</.exec(shown)?.[1];
    expect(token).toBeTruthy();
    expect(decodeJwt(token!)).toMatchObject({ sub: userId, act: { sub: adminId } });
  });
});
