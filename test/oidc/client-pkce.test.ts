import * as oidc from "openid-client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { adminApi, obtainAdminTokens } from "../support/admin-api";
import { createClient, createOrganization, createUser } from "../support/factories";
import { authorizationUrl, clientConfiguration, followAuthorization, pkcePair } from "../support/oidc";
import { startTestPorta, type TestPorta } from "../support/porta";
import { expect422 } from "../admin/helpers";
import { resourceFingerprint } from "../admin/resources";

/**
 * The per-client PKCE setting (decision 073): `inherit` follows the organization's OAuth 2.1
 * mode, `required` always asks for PKCE, `not_required` lets a confidential client skip it
 * (relying parties that cannot send it, such as passport-openidconnect). A public client always
 * sends it. A refusal names the rule and where to change it.
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

type Setting = "inherit" | "required" | "not_required";

/**
 * The provider's answer to an authorization request with or without PKCE: the error and its
 * description at the client's redirect URI, or null when the request went on to the sign-in.
 */
async function answer(slug: string, clientId: string, withPkce: boolean): Promise<{ error: string; description: string } | null> {
  const pkce: Record<string, string> = withPkce ? { code_challenge: (await pkcePair()).challenge, code_challenge_method: "S256" } : {};
  const res = await fetch(authorizationUrl(porta, { slug }, { id: clientId }, { redirect_uri: CB, scope: "openid", state: "s", ...pkce }), { redirect: "manual" });
  await res.body?.cancel();
  expect(res.status).toBe(303);
  const location = new URL(res.headers.get("location")!, porta.baseUrl);
  if (!location.href.startsWith(CB)) {
    expect(location.pathname).toMatch(/^\/interaction\//);
    return null;
  }
  return { error: location.searchParams.get("error")!, description: location.searchParams.get("error_description")! };
}

async function organization(oauth21: boolean) {
  const prisma = porta.services.db.prisma;
  const org = await createOrganization(prisma);
  await prisma.organization.update({ where: { id: org.id }, data: { oauth21 } });
  return org;
}

describe("per-client PKCE setting", () => {
  const cases: Array<{ oauth21: boolean; pkce: Setting; confidential: boolean; refused: "organization" | "client" | "public" | null }> = [
    { oauth21: true, pkce: "inherit", confidential: true, refused: "organization" },
    { oauth21: true, pkce: "required", confidential: true, refused: "client" },
    { oauth21: true, pkce: "not_required", confidential: true, refused: null },
    { oauth21: false, pkce: "inherit", confidential: true, refused: null },
    { oauth21: false, pkce: "required", confidential: true, refused: "client" },
    { oauth21: false, pkce: "not_required", confidential: true, refused: null },
    { oauth21: false, pkce: "inherit", confidential: false, refused: "public" },
    { oauth21: true, pkce: "required", confidential: false, refused: "public" },
  ];
  for (const { oauth21, pkce, confidential, refused } of cases) {
    const who = confidential ? "a confidential client" : "a public client";
    it(`${who} set to ${pkce} in an organization ${oauth21 ? "in" : "outside"} OAuth 2.1 mode: without PKCE ${refused ? "refused" : "accepted"}, with PKCE accepted`, async () => {
      const org = await organization(oauth21);
      const { client } = await createClient(porta.services.db.prisma, org.id, { confidential, pkce });
      expect(await answer(org.slug, client.id, true)).toBeNull();
      const without = await answer(org.slug, client.id, false);
      if (!refused) {
        expect(without).toBeNull();
        return;
      }
      expect(without?.error).toBe("invalid_request");
      expect(without?.description).toContain("this client must send PKCE (code_challenge, S256)");
      if (refused === "public") {
        expect(without?.description).toContain("public client");
        expect(without?.description).not.toContain("administrator");
      } else {
        expect(without?.description).toContain("an administrator can change the client's PKCE setting");
        expect(without?.description).toContain(refused === "organization" ? "OAuth 2.1 mode" : "PKCE setting is required");
      }
    });
  }

  it("lets a confidential client set to not_required finish the code flow without PKCE in OAuth 2.1 mode", async () => {
    const prisma = porta.services.db.prisma;
    const org = await organization(true);
    const userId = (await createUser(prisma, org.id)).id;
    const { client, secret } = await createClient(prisma, org.id, { pkce: "not_required" });
    const config = await clientConfiguration(porta, org, client, { secret: secret!.value });
    const state = oidc.randomState();
    const url = oidc.buildAuthorizationUrl(config, { redirect_uri: CB, scope: "openid", state });
    const callback = await followAuthorization(porta, org, url, { accountId: userId });
    const tokens = await oidc.authorizationCodeGrant(config, callback, { expectedState: state });
    expect(tokens.id_token).toBeTruthy();
  });

  it("is a client field of the Admin API: inherit by default, changed at once at the authorization endpoint", async () => {
    const org = await organization(true);
    const created = await api.post<{ id: string; pkce: string }>("/clients", { organizationId: org.id, name: "Passport app", clientType: "confidential", redirectUris: [CB] });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    expect(created.body.pkce).toBe("inherit");
    expect((await answer(org.slug, created.body.id, false))?.error).toBe("invalid_request");
    const updated = await api.put<{ pkce: string }>(`/clients/${created.body.id}`, { pkce: "not_required" }, { "if-match": '"v1"' });
    expect(updated.status, JSON.stringify(updated.body)).toBe(200);
    expect(updated.body.pkce).toBe("not_required");
    expect(await answer(org.slug, created.body.id, false)).toBeNull();
    const made = await api.post<{ pkce: string }>("/clients", { organizationId: org.id, name: "Strict", clientType: "confidential", redirectUris: [CB], pkce: "required" });
    expect(made.body.pkce).toBe("required");
  });

  it("refuses not_required for a public client, and any unknown value, with 422 on the field, writing nothing", async () => {
    const org = await organization(false);
    const pub = await api.post<{ id: string }>("/clients", { organizationId: org.id, name: "SPA", clientType: "public", redirectUris: [CB] });
    expect(pub.status).toBe(201);
    const before = await resourceFingerprint(porta);
    const refusal = await api.post("/clients", { organizationId: org.id, name: "SPA 2", clientType: "public", redirectUris: [CB], pkce: "not_required" });
    expect422(refusal, "pkce");
    expect(JSON.stringify(refusal.body)).toContain("public client always sends PKCE");
    expect422(await api.put(`/clients/${pub.body.id}`, { pkce: "not_required" }), "pkce");
    expect422(await api.put(`/clients/${pub.body.id}`, { pkce: "sometimes" }), "pkce");
    expect422(await api.post("/clients", { organizationId: org.id, name: "x", clientType: "confidential", redirectUris: [CB], pkce: false }), "pkce");
    expect(await resourceFingerprint(porta)).toEqual(before);
  });
});
