import * as oidc from "openid-client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { invalidateClient } from "~/.server/directory/clients";
import { addClientSecret, createApplication, createClient, createOrganization, createUser } from "../support/factories";
import { basicAuth, clientConfiguration, codeFlow, issuerOf, oidcError, postForm, verifyWithJwks, type OrgRef } from "../support/oidc";
import { startTestPorta, type TestPorta } from "../support/porta";

let porta: TestPorta;
let org: OrgRef;

beforeAll(async () => {
  porta = await startTestPorta();
  org = await createOrganization(porta.services.db.prisma);
});
afterAll(async () => {
  await porta?.stop();
});

const CC = ["client_credentials"];

async function machineClient(input: Parameters<typeof createClient>[2] = {}) {
  const { client, secret } = await createClient(porta.services.db.prisma, org.id, { grantTypes: CC, ...input });
  return { client, secret: secret!.value };
}

const ccAt = (path: string, clientId: string, secret: string, form: Record<string, string> = {}) =>
  postForm(`${issuerOf(porta, org)}${path}`, { grant_type: "client_credentials", ...form }, { authorization: basicAuth(clientId, secret) });

describe("client_credentials", () => {
  it("issues an ES256 JWT access token for the organization's resource", async () => {
    const { client, secret } = await machineClient();
    const config = await clientConfiguration(porta, org, client, { secret });
    const tokens = await oidc.clientCredentialsGrant(config);
    expect(tokens.token_type.toLowerCase()).toBe("bearer");
    expect(tokens.refresh_token).toBeUndefined();
    expect(tokens.id_token).toBeUndefined();
    const { payload, protectedHeader } = await verifyWithJwks(porta, org, tokens.access_token, { audience: issuerOf(porta, org), typ: "at+jwt" });
    expect(protectedHeader.alg).toBe("ES256");
    expect(payload).toMatchObject({ iss: issuerOf(porta, org), aud: issuerOf(porta, org), client_id: client.id });
    expect(payload.sub).toBe(client.id);
    expect(payload.exp).toBeGreaterThan(Math.floor(Date.now() / 1000));
  });

  it("refuses the scopes that name a user (openid, profile, email, offline_access, roles) with invalid_scope and no token", async () => {
    const { client, secret } = await machineClient({ scope: "openid profile email offline_access roles" });
    for (const scope of ["openid", "profile", "email", "offline_access", "roles", "openid email"]) {
      const answer = await ccAt("/auth/token", client.id, secret, { scope });
      expect(answer.status, scope).toBe(400);
      expect(answer.body.error, scope).toBe("invalid_scope");
      expect(answer.body.access_token, scope).toBeUndefined();
    }
    // Without a scope the client still gets its token.
    expect((await ccAt("/auth/token", client.id, secret)).status).toBe(200);
  });

  it("accepts client_secret_post too", async () => {
    const { client, secret } = await machineClient();
    const answer = await postForm(`${issuerOf(porta, org)}/auth/token`, { grant_type: "client_credentials", client_id: client.id, client_secret: secret });
    expect(answer.status).toBe(200);
    expect(answer.body.access_token).toBeTruthy();
  });

  it("refuses a client that may not use the grant", async () => {
    const { client, secret } = await machineClient({ grantTypes: ["authorization_code"] });
    const answer = await ccAt("/auth/token", client.id, secret);
    // RFC 6749 §5.2: the authenticated client is not authorized to use this grant type.
    expect(answer.status).toBe(400);
    expect(answer.body).toEqual({ error: "unauthorized_client", error_description: "requested grant type is not allowed for this client" });
  });

  it("refuses a wrong secret and an unknown client with invalid_client", async () => {
    const { client } = await machineClient();
    for (const [id, secret] of [
      [client.id, "wrong"],
      ["no-such-client", "whatever"],
    ] as const) {
      const answer = await ccAt("/auth/token", id, secret);
      expect(answer.status).toBe(401);
      expect(answer.body.error).toBe("invalid_client");
    }
  });

  it("refuses a client of another organization", async () => {
    const other = await createOrganization(porta.services.db.prisma);
    const { client, secret } = await createClient(porta.services.db.prisma, other.id, { grantTypes: CC });
    const answer = await ccAt("/auth/token", client.id, secret!.value);
    expect(answer.status).toBe(401);
    expect(answer.body.error).toBe("invalid_client");
    expect((await postForm(`${issuerOf(porta, other)}/auth/token`, { grant_type: "client_credentials" }, { authorization: basicAuth(client.id, secret!.value) })).status).toBe(200);
  });
});

describe("client secrets", () => {
  it("accepts each of two active secrets, and only the other one once one is revoked", async () => {
    const prisma = porta.services.db.prisma;
    const { client, secret: first } = await machineClient();
    const second = await addClientSecret(prisma, client.id);
    await invalidateClient(porta.services.cache, client.id);

    expect((await ccAt("/auth/token", client.id, first)).status).toBe(200);
    expect((await ccAt("/auth/token", client.id, second.value)).status).toBe(200);

    const firstRow = await prisma.clientSecret.findFirstOrThrow({ where: { clientId: client.id, id: { not: second.id } } });
    await prisma.clientSecret.update({ where: { id: firstRow.id }, data: { status: "revoked", revokedAt: new Date() } });
    await invalidateClient(porta.services.cache, client.id);

    const revoked = await ccAt("/auth/token", client.id, first);
    expect(revoked.status).toBe(401);
    expect(revoked.body.error).toBe("invalid_client");
    expect((await ccAt("/auth/token", client.id, second.value)).status).toBe(200);
  });

  it("refuses an expired secret", async () => {
    const prisma = porta.services.db.prisma;
    const { client, secret } = await machineClient();
    await prisma.clientSecret.updateMany({ where: { clientId: client.id }, data: { expiresAt: new Date(Date.now() - 1000) } });
    await invalidateClient(porta.services.cache, client.id);
    const answer = await ccAt("/auth/token", client.id, secret);
    expect(answer.status).toBe(401);
    expect(answer.body.error).toBe("invalid_client");
  });
});

describe("inactive clients and applications", () => {
  it("refuses an inactive client", async () => {
    const { client, secret } = await machineClient({ status: "inactive" });
    const answer = await ccAt("/auth/token", client.id, secret);
    expect(answer.status).toBe(401);
    expect(answer.body.error).toBe("invalid_client");
  });

  it("refuses a client as soon as it is deactivated", async () => {
    const prisma = porta.services.db.prisma;
    const { client, secret } = await machineClient();
    expect((await ccAt("/auth/token", client.id, secret)).status).toBe(200);
    await prisma.client.update({ where: { id: client.id }, data: { status: "inactive" } });
    await invalidateClient(porta.services.cache, client.id);
    expect((await ccAt("/auth/token", client.id, secret)).body.error).toBe("invalid_client");
  });

  it("refuses a client of an inactive application", async () => {
    const prisma = porta.services.db.prisma;
    const application = await createApplication(prisma, org.id, { status: "inactive" });
    const { client, secret } = await machineClient({ applicationId: application.id });
    const answer = await ccAt("/auth/token", client.id, secret);
    expect(answer.status).toBe(401);
    expect(answer.body.error).toBe("invalid_client");

    const active = await createApplication(prisma, org.id);
    const ok = await machineClient({ applicationId: active.id });
    expect((await ccAt("/auth/token", ok.client.id, ok.secret)).status).toBe(200);
  });
});

describe("/{slug}/token, the alias of /{slug}/auth/token", () => {
  const shape = (body: Record<string, unknown>) => Object.fromEntries(Object.entries(body).map(([k, v]) => [k, k === "access_token" ? typeof v : v]));

  it("grants client_credentials exactly like the canonical endpoint", async () => {
    const { client, secret } = await machineClient({ scope: "openid" });
    const canonical = await ccAt("/auth/token", client.id, secret);
    const alias = await ccAt("/token", client.id, secret);
    expect(canonical.status).toBe(200);
    expect(alias.status).toBe(200);
    expect(shape(alias.body)).toEqual(shape(canonical.body));
    expect(alias.headers.get("content-type")).toBe(canonical.headers.get("content-type"));
    expect(alias.headers.get("cache-control")).toBe(canonical.headers.get("cache-control"));
    const token = await verifyWithJwks(porta, org, String(alias.body.access_token), { audience: issuerOf(porta, org) });
    expect(token.payload.client_id).toBe(client.id);
  });

  it("through openid-client, with the token endpoint set to the alias", async () => {
    const { client, secret } = await machineClient();
    const config = await clientConfiguration(porta, org, client, { secret, server: { token_endpoint: `${issuerOf(porta, org)}/token` } });
    const tokens = await oidc.clientCredentialsGrant(config);
    expect((await verifyWithJwks(porta, org, tokens.access_token)).payload.client_id).toBe(client.id);
  });

  it("accepts the slug in any case", async () => {
    const { client, secret } = await machineClient();
    for (const path of ["/auth/token", "/token"]) {
      const answer = await postForm(`${porta.baseUrl}/${org.slug.toUpperCase()}${path}`, { grant_type: "client_credentials" }, { authorization: basicAuth(client.id, secret) });
      expect(answer.status, path).toBe(200);
      expect((await verifyWithJwks(porta, org, String(answer.body.access_token))).payload.iss).toBe(issuerOf(porta, org));
    }
  });

  it("answers errors exactly like the canonical endpoint", async () => {
    const { client, secret } = await machineClient({ scope: "openid" });
    const errorForms: Array<Record<string, string>> = [
      { grant_type: "password", username: "a", password: "b" },
      { grant_type: "refresh_token", refresh_token: "nope" },
      { grant_type: "authorization_code", code: "nope", redirect_uri: "https://rp.example.com/cb" },
      { scope: "email" },
    ];
    for (const form of errorForms) {
      const canonical = await ccAt("/auth/token", client.id, secret, form);
      const alias = await ccAt("/token", client.id, secret, form);
      expect(canonical.status, JSON.stringify(form)).toBeGreaterThanOrEqual(400);
      expect(alias.status).toBe(canonical.status);
      expect(alias.body).toEqual(canonical.body);
    }
    const canonical = await ccAt("/auth/token", client.id, "wrong");
    const alias = await ccAt("/token", client.id, "wrong");
    expect(alias.status).toBe(401);
    expect(alias.body).toEqual(canonical.body);
    expect(alias.headers.get("www-authenticate")).toBe(canonical.headers.get("www-authenticate"));
  });

  it("redeems authorization codes and refresh tokens too", async () => {
    const prisma = porta.services.db.prisma;
    const { client, secret } = await createClient(prisma, org.id, { grantTypes: ["authorization_code", "refresh_token"] });
    const user = await createUser(prisma, org.id);
    const config = await clientConfiguration(porta, org, client, { secret: secret!.value, server: { token_endpoint: `${issuerOf(porta, org)}/token` } });
    const tokens = await codeFlow(porta, org, config, {
      accountId: user.id,
      scope: "openid offline_access",
      redirectUri: "https://rp.example.com/cb",
      params: { prompt: "consent" },
    });
    expect(tokens.claims()?.sub).toBe(user.id);
    const refreshed = await oidc.refreshTokenGrant(config, tokens.refresh_token!);
    expect(refreshed.access_token).toBeTruthy();
    expect(await oidcError(oidc.refreshTokenGrant(config, tokens.refresh_token!))).toMatchObject({ error: "invalid_grant" });
  });
});

describe("introspection and revocation of client_credentials tokens", () => {
  const introspect = (token: string, clientId: string, secret: string) =>
    postForm(`${issuerOf(porta, org)}/token/introspection`, { token }, { authorization: basicAuth(clientId, secret) });

  it("answers with what the token says, and with inactive once it is revoked", async () => {
    // A scope of the organization's own claims, as an API's scope (the built-in ones name a user).
    const prisma = porta.services.db.prisma;
    const application = await createApplication(prisma, org.id);
    await prisma.customClaimDefinition.create({ data: { applicationId: application.id, claimName: "report_level", claimType: "number", scope: "reports" } });
    await porta.services.oidc.invalidate(org.id);
    const { client, secret } = await machineClient({ scope: "reports" });
    const issued = await ccAt("/auth/token", client.id, secret, { scope: "reports" });
    const token = issued.body.access_token as string;
    const claims = (await verifyWithJwks(porta, org, token, { audience: issuerOf(porta, org), typ: "at+jwt" })).payload;
    const answer = await introspect(token, client.id, secret);
    expect(answer.status).toBe(200);
    expect(answer.body).toMatchObject({
      active: true,
      client_id: client.id,
      scope: "reports",
      aud: issuerOf(porta, org),
      iss: issuerOf(porta, org),
      iat: claims.iat,
      exp: claims.exp,
      token_type: "Bearer",
    });
    expect(answer.body.sub).toBeUndefined();

    const revoked = await postForm(`${issuerOf(porta, org)}/token/revocation`, { token }, { authorization: basicAuth(client.id, secret) });
    expect(revoked.status).toBe(200);
    expect((await introspect(token, client.id, secret)).body).toEqual({ active: false });
    // Another token of the same client is not touched.
    const other = (await ccAt("/auth/token", client.id, secret)).body.access_token as string;
    expect((await introspect(other, client.id, secret)).body.active).toBe(true);
  });

  it("keeps a DPoP-bound token's binding", async () => {
    const { client, secret } = await machineClient();
    const config = await clientConfiguration(porta, org, client, { secret });
    const DPoP = oidc.getDPoPHandle(config, await oidc.randomDPoPKeyPair("ES256"));
    const tokens = await oidc.clientCredentialsGrant(config, {}, { DPoP });
    expect(tokens.token_type.toLowerCase()).toBe("dpop");
    const answer = await introspect(tokens.access_token, client.id, secret);
    expect(answer.body).toMatchObject({ active: true, token_type: "DPoP", cnf: { jkt: expect.any(String) } });
  });
});
