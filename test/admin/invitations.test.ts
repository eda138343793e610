import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { adminApi, obtainAdminTokens } from "../support/admin-api";
import { startTestPorta, type TestPorta } from "../support/porta";
import { linkIn, startSmtpPeer, type SmtpPeer } from "../support/smtp";
import { createTenant, expectError, unique, type ErrorBody, type Tenant } from "./helpers";

/**
 * Pending invitations (decision 040): listed per organization, resent (same link, renewed
 * expiry, a second mail) and revoked (the link stops working), each audited; inviting an
 * address that already has a pending invitation is a 409 `invitation_pending` naming the email
 * field, while an expired one is replaced.
 */
interface Invitation {
  id: string;
  email: string;
  expiresAt: string;
  expired: boolean;
  invitedBy: string | null;
}
interface Page<T> {
  data: T[];
  total: number;
}
interface Outcome {
  invitationId: string;
  email: string;
  invitationSent: boolean;
  expiresAt: string;
}

let peer: SmtpPeer;
let porta: TestPorta;
let api: ReturnType<typeof adminApi>;
let tenant: Tenant;
beforeAll(async () => {
  peer = await startSmtpPeer();
  porta = await startTestPorta({ env: peer.env });
  api = adminApi(porta, (await obtainAdminTokens(porta)).accessToken);
  tenant = await createTenant(porta);
});
afterAll(async () => {
  await porta?.stop();
  await peer?.close();
});

const prisma = () => porta.services.db.prisma;
const invitationsOf = (t: Tenant) => `/organizations/${t.org.id}/invitations`;
const invite = (t: Tenant, email: string) => api.post<Outcome>(`/organizations/${t.org.id}/users/invite`, { email });
const newEmail = (prefix: string) => `${unique(prefix)}@example.com`;

/** The invitation page as the recipient opens it: 200 with the form while the invitation is open. */
async function openLink(link: string) {
  const res = await fetch(link);
  return { status: res.status, html: await res.text() };
}

describe("pending invitations", () => {
  it("lists the organization's pending invitations newest first, never another organization's or an accepted one", async () => {
    const own = await createTenant(porta);
    const other = await createTenant(porta);
    const first = newEmail("first");
    const second = newEmail("second");
    expect((await invite(own, first)).status).toBe(201);
    expect((await invite(own, second)).status).toBe(201);
    expect((await invite(other, newEmail("elsewhere"))).status).toBe(201);
    const accepted = newEmail("accepted");
    const acceptedOutcome = await invite(own, accepted);
    await prisma().invitation.update({ where: { id: acceptedOutcome.body.invitationId }, data: { acceptedAt: new Date() } });

    const list = await api.get<Page<Invitation>>(invitationsOf(own));
    expect(list.status).toBe(200);
    expect(list.body.total).toBe(2);
    expect(list.body.data.map((i) => i.email)).toEqual([second, first]);
    expect(list.body.data[0]).toMatchObject({ expired: false, invitedBy: "admin@porta.test" });
    expectError(await api.get(`/organizations/${own.org.id}/invitations?bogus=1`), 422, "validation_failed");
  });

  it("refuses a second invitation to a pending address with 409 invitation_pending on the email field; an expired one is replaced", async () => {
    const email = newEmail("twice");
    const first = await invite(tenant, email);
    expect(first.status).toBe(201);
    const again = await invite(tenant, email.toUpperCase());
    expectError(again, 409, "invitation_pending");
    expect((again.body as unknown as ErrorBody).error.details?.map((d) => d.field)).toEqual(["email"]);
    expect(await prisma().invitation.count({ where: { organizationId: tenant.org.id, email } })).toBe(1);

    await prisma().invitation.update({ where: { id: first.body.invitationId }, data: { expiresAt: new Date(Date.now() - 1000) } });
    const listed = await api.get<Page<Invitation>>(invitationsOf(tenant));
    expect(listed.body.data.find((i) => i.id === first.body.invitationId)?.expired).toBe(true);
    const replaced = await invite(tenant, email);
    expect(replaced.status).toBe(201);
    const rows = await prisma().invitation.findMany({ where: { organizationId: tenant.org.id, email } });
    expect(rows.map((r) => r.id)).toEqual([replaced.body.invitationId]);
  });

  it("two invitations racing for one address: exactly one is stored", async () => {
    const email = newEmail("race");
    const results = await Promise.all([invite(tenant, email), invite(tenant, email), invite(tenant, email)]);
    expect(results.map((r) => r.status).sort()).toEqual([201, 409, 409]);
    expect(await prisma().invitation.count({ where: { organizationId: tenant.org.id, email } })).toBe(1);
  });

  it("resends an expired invitation with the same link and a renewed expiry (audited); the link works again", async () => {
    const email = newEmail("resend");
    const outcome = await invite(tenant, email);
    const link = linkIn(await peer.waitForMail(email), "/invitation?token=");
    await prisma().invitation.update({ where: { id: outcome.body.invitationId }, data: { expiresAt: new Date(Date.now() - 1000) } });
    expect((await openLink(link)).status).not.toBe(200);

    const resent = await api.post<Outcome>(`${invitationsOf(tenant)}/${outcome.body.invitationId}/resend`);
    expect(resent.status).toBe(200);
    expect(resent.body).toMatchObject({ invitationId: outcome.body.invitationId, email, invitationSent: true });
    expect(Date.parse(resent.body.expiresAt)).toBeGreaterThan(Date.now() + 6 * 86_400_000);
    const second = await peer.waitForMail(email, { count: 2 });
    expect(linkIn(second, "/invitation?token=")).toBe(link);
    expect((await openLink(link)).status).toBe(200);

    const entries = await prisma().auditEntry.findMany({ where: { targetId: outcome.body.invitationId, eventType: "user.invitation_resent" } });
    expect(entries).toHaveLength(1);
    expect(entries[0]).toMatchObject({ actorType: "admin", targetType: "invitation", organizationId: tenant.org.id, data: { email } });
  });

  it("revokes an invitation: the link stops working, the list drops it, the entry is audited; twice is 404", async () => {
    const email = newEmail("revoke");
    const outcome = await invite(tenant, email);
    const link = linkIn(await peer.waitForMail(email), "/invitation?token=");
    expect((await openLink(link)).status).toBe(200);

    const revoked = await api.delete(`${invitationsOf(tenant)}/${outcome.body.invitationId}`);
    expect(revoked.status).toBe(204);
    expect((await openLink(link)).status).not.toBe(200);
    expect((await api.get<Page<Invitation>>(invitationsOf(tenant))).body.data.map((i) => i.email)).not.toContain(email);
    expect(await prisma().auditEntry.count({ where: { targetId: outcome.body.invitationId, eventType: "user.invitation_revoked", data: { path: ["email"], equals: email } } })).toBe(1);
    expectError(await api.delete(`${invitationsOf(tenant)}/${outcome.body.invitationId}`), 404, "not_found");
    expectError(await api.post(`${invitationsOf(tenant)}/${outcome.body.invitationId}/resend`), 404, "not_found");
    // Revoked, the address can be invited again.
    expect((await invite(tenant, email)).status).toBe(201);
  });

  it("an invitation is managed through its own organization only; an address that became a user cannot be resent", async () => {
    const email = newEmail("became-user");
    const outcome = await invite(tenant, email);
    const other = await createTenant(porta);
    expectError(await api.delete(`${invitationsOf(other)}/${outcome.body.invitationId}`), 404, "not_found");
    expectError(await api.post(`${invitationsOf(other)}/${outcome.body.invitationId}/resend`), 404, "not_found");
    await prisma().user.create({ data: { organizationId: tenant.org.id, email } });
    expectError(await api.post(`${invitationsOf(tenant)}/${outcome.body.invitationId}/resend`), 409, "user_exists");
  });
});
