import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { adminApi, obtainAdminTokens } from "../support/admin-api";
import { createClient, createOrganization, createUser } from "../support/factories";
import { authorizationUrl, clientConfiguration, codeFlow } from "../support/oidc";
import { startTestPorta, type TestPorta } from "../support/porta";

/**
 * OAuth 2.1 mode (decision 052): in an organization that follows OAuth 2.1 every
 * client must use PKCE S256, confidential ones too; an organization made before the mode keeps
 * its behaviour until switched; the Admin API turns it on for new organizations.
 */
const CB = "https://rp.example.com/cb";
let porta: TestPorta;
let api: ReturnType<typeof adminApi>;

beforeAll(async () => {
  porta = await startTestPorta();
  api = adminApi(porta, (await obtainAdminTokens(porta)).accessToken);
});
afterAll(async () => {
  await porta?.stop();
});

/** The provider's answer to an authorization request without PKCE: the error it redirects with, or none. */
async function withoutPkce(slug: string, clientId: string): Promise<string | null> {
  const res = await fetch(authorizationUrl(porta, { slug }, { id: clientId }, { redirect_uri: CB, scope: "openid", state: "s" }), { redirect: "manual" });
  expect(res.status).toBe(303);
  const location = new URL(res.headers.get("location")!, porta.baseUrl);
  return location.href.startsWith(CB) ? location.searchParams.get("error") : null;
}

describe("OAuth 2.1 mode", () => {
  it("is on for an organization created through the Admin API, and can be switched, audited", async () => {
    const created = await api.post<{ id: string; oauth21: boolean }>("/organizations", { name: "Strict", slug: `strict-${Date.now()}` });
    expect(created.status).toBe(201);
    expect(created.body.oauth21).toBe(true);
    const off = await api.put<{ oauth21: boolean }>(`/organizations/${created.body.id}`, { oauth21: false }, { "if-match": created.headers.get("etag")! });
    expect(off.status).toBe(200);
    expect(off.body.oauth21).toBe(false);
    const entry = await porta.services.db.prisma.auditEntry.findFirst({ where: { eventType: "organization.updated", targetId: created.body.id }, orderBy: { createdAt: "desc" } });
    expect(JSON.stringify(entry?.data)).toContain("oauth21");
    const bad = await api.put(`/organizations/${created.body.id}`, { oauth21: "yes" });
    expect(bad.status).toBe(422);
  });

  it("refuses a confidential client's authorization request without PKCE, and completes one with it", async () => {
    const prisma = porta.services.db.prisma;
    const org = await createOrganization(prisma);
    await prisma.organization.update({ where: { id: org.id }, data: { oauth21: true } });
    const userId = (await createUser(prisma, org.id)).id;
    const { client, secret } = await createClient(prisma, org.id, { confidential: true });
    expect(await withoutPkce(org.slug, client.id)).toBe("invalid_request");
    const config = await clientConfiguration(porta, org, client, { secret: secret!.value });
    const tokens = await codeFlow(porta, org, config, { accountId: userId, scope: "openid", redirectUri: CB });
    expect(tokens.access_token).toBeTruthy();
  });

  it("leaves an organization made before the mode as it was until it is switched, at once", async () => {
    const prisma = porta.services.db.prisma;
    const org = await createOrganization(prisma);
    const { client } = await createClient(prisma, org.id, { confidential: true });
    expect(await withoutPkce(org.slug, client.id)).toBeNull();
    const current = await api.get(`/organizations/${org.id}`);
    expect((await api.put(`/organizations/${org.id}`, { oauth21: true }, { "if-match": current.headers.get("etag")! })).status).toBe(200);
    expect(await withoutPkce(org.slug, client.id)).toBe("invalid_request");
  });
});
