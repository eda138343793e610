import * as oidc from "openid-client";
import { decodeJwt } from "jose";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { invalidateUser } from "~/.server/directory/users";
import { TOKEN_EXCHANGE_GRANT } from "~/schemas/client";
import { adminApi, obtainAdminTokens } from "../support/admin-api";
import { createClient, createOrganization, createUser } from "../support/factories";
import { clientConfiguration, codeFlow, issuerOf, oidcError, verifyWithJwks, type OrgRef } from "../support/oidc";
import { startTestPorta, type TestPorta } from "../support/porta";

/**
 * RFC 8693 token exchange at an organization's token endpoint (decision 053), with openid-client
 * as the exchanging client: a person's access token becomes a short token for an audience the
 * client's policy allows, `act` names who acts for the person, and every refusal speaks RFC
 * 8693 §2.2.2 / RFC 6749 §5.2.
 */
const ACCESS_TOKEN = "urn:ietf:params:oauth:token-type:access_token";
const API = "https://api.example.com";
const OTHER_API = "https://billing.example.com";
const CB = "https://rp.example.com/cb";

let porta: TestPorta;
let org: OrgRef;
let other: OrgRef;
let userId: string;
let otherUserId: string;
let rp: oidc.Configuration;
let otherRp: oidc.Configuration;
/** A service that may exchange tokens for API, and gets client_credentials tokens to act as itself. */
let gateway: { id: string; config: oidc.Configuration };
/** A confidential client without a token exchange policy. */
let plain: oidc.Configuration;

async function confidential(orgRef: OrgRef, input: Parameters<typeof createClient>[2] = {}) {
  const { client, secret } = await createClient(porta.services.db.prisma, orgRef.id, input);
  return { id: client.id, config: await clientConfiguration(porta, orgRef, client, { secret: secret!.value }) };
}

beforeAll(async () => {
  porta = await startTestPorta();
  const prisma = porta.services.db.prisma;
  org = await createOrganization(prisma);
  other = await createOrganization(prisma);
  userId = (await createUser(prisma, org.id)).id;
  otherUserId = (await createUser(prisma, other.id)).id;
  rp = (await confidential(org)).config;
  otherRp = (await confidential(other)).config;
  gateway = await confidential(org, { grantTypes: ["client_credentials"], tokenExchangeAudiences: [API, OTHER_API] });
  plain = (await confidential(org, { grantTypes: ["client_credentials"] })).config;
});
afterAll(async () => {
  await porta?.stop();
});

const signIn = async (at: OrgRef = org, config: oidc.Configuration = rp, accountId = userId) =>
  (await codeFlow(porta, at, config, { accountId, scope: "openid email profile offline_access", redirectUri: CB, params: { prompt: "consent" } })).access_token;

const exchange = (config: oidc.Configuration, params: Record<string, string>) =>
  oidc.genericGrantRequest(config, TOKEN_EXCHANGE_GRANT, { subject_token_type: ACCESS_TOKEN, audience: API, ...params });

describe("token exchange", () => {
  it("is listed in the organization's discovery document", async () => {
    expect(rp.serverMetadata().grant_types_supported).toContain(TOKEN_EXCHANGE_GRANT);
  });

  it("issues a short access token for the allowed audience, for the person, with act naming the actor", async () => {
    const subjectToken = await signIn();
    const actorToken = (await oidc.clientCredentialsGrant(gateway.config)).access_token;
    const answer = await exchange(gateway.config, { subject_token: subjectToken, actor_token: actorToken, actor_token_type: ACCESS_TOKEN, scope: "email" });

    expect(answer.issued_token_type).toBe(ACCESS_TOKEN);
    expect(answer.token_type.toLowerCase()).toBe("bearer");
    expect(answer.scope).toBe("email");
    expect(answer.refresh_token).toBeUndefined();
    expect(answer.expires_in).toBeGreaterThan(0);
    expect(answer.expires_in).toBeLessThanOrEqual(300);
    const { payload, protectedHeader } = await verifyWithJwks(porta, org, answer.access_token, { audience: API, typ: "at+jwt" });
    expect(protectedHeader.alg).toBe("ES256");
    expect(payload).toMatchObject({ iss: issuerOf(porta, org), aud: API, sub: userId, client_id: gateway.id, scope: "email", act: { sub: gateway.id } });
    expect(payload.exp! - payload.iat!).toBeLessThanOrEqual(300);

    // The issued token is a live token of the organization: its introspection says so.
    const introspected = await oidc.tokenIntrospection(gateway.config, answer.access_token);
    expect(introspected).toMatchObject({ active: true, sub: userId, aud: API, act: { sub: gateway.id } });
  });

  it("keeps the delegation chain: exchanging an exchanged token nests the earlier actor", async () => {
    const first = await exchange(gateway.config, { subject_token: await signIn(), actor_token: (await oidc.clientCredentialsGrant(gateway.config)).access_token, actor_token_type: ACCESS_TOKEN });
    const second = await confidential(org, { grantTypes: ["client_credentials"], tokenExchangeAudiences: [OTHER_API] });
    const actorToken = (await oidc.clientCredentialsGrant(second.config)).access_token;
    const answer = await exchange(second.config, { subject_token: first.access_token, actor_token: actorToken, actor_token_type: ACCESS_TOKEN, audience: OTHER_API });
    expect(decodeJwt(answer.access_token)).toMatchObject({ sub: userId, aud: OTHER_API, act: { sub: second.id, act: { sub: gateway.id } } });
  });

  it("without an actor token, issues a token without act", async () => {
    const answer = await exchange(gateway.config, { subject_token: await signIn(), resource: OTHER_API, audience: OTHER_API });
    const claims = decodeJwt(answer.access_token);
    expect(claims).toMatchObject({ sub: userId, aud: OTHER_API });
    expect(claims.act).toBeUndefined();
    expect(String(claims.scope).split(" ").sort()).toEqual(["email", "offline_access", "openid", "profile"]);
  });

  it("writes a token.exchanged audit entry naming client, person, actor and audience, and no token", async () => {
    const subjectToken = await signIn();
    const actorToken = (await oidc.clientCredentialsGrant(gateway.config)).access_token;
    const answer = await exchange(gateway.config, { subject_token: subjectToken, actor_token: actorToken, actor_token_type: ACCESS_TOKEN, scope: "openid email" });
    const entry = await porta.services.db.prisma.auditEntry.findFirstOrThrow({ where: { eventType: "token.exchanged", organizationId: org.id }, orderBy: { createdAt: "desc" } });
    expect(entry).toMatchObject({ actorType: "client", actorId: gateway.id, targetType: "user", targetId: userId });
    expect(entry.data).toMatchObject({ clientId: gateway.id, act: { sub: gateway.id }, audience: API, scope: "openid email" });
    const stored = JSON.stringify(entry);
    for (const token of [subjectToken, actorToken, answer.access_token]) expect(stored).not.toContain(token.split(".")[2]);
  });

  it("refuses an audience the client's policy does not allow with invalid_target", async () => {
    const subject_token = await signIn();
    expect(await oidcError(exchange(gateway.config, { subject_token, audience: "https://elsewhere.example.com" }))).toMatchObject({ error: "invalid_target", status: 400 });
    expect(await oidcError(exchange(gateway.config, { subject_token, audience: API, resource: OTHER_API }))).toMatchObject({ error: "invalid_target", status: 400 });
  });

  it("never issues a token for the Admin API, even to a client that lists it", async () => {
    const adminApi = `${porta.baseUrl}/api/admin`;
    const superAdmin = { id: porta.bootstrap.organizationId, slug: porta.services.config.superAdminSlug };
    const service = await confidential(superAdmin, { grantTypes: ["client_credentials"], tokenExchangeAudiences: [adminApi] });
    const { accessToken } = await obtainAdminTokens(porta);
    const answer = await oidcError(exchange(service.config, { subject_token: accessToken, audience: adminApi }));
    expect(answer).toMatchObject({ error: "invalid_target", status: 400 });
  });

  it("asks for the audience when the policy allows more than one", async () => {
    const answer = await oidcError(oidc.genericGrantRequest(gateway.config, TOKEN_EXCHANGE_GRANT, { subject_token_type: ACCESS_TOKEN, subject_token: await signIn() }));
    expect(answer).toMatchObject({ error: "invalid_request", status: 400 });
  });

  it("refuses a client without a token exchange policy with unauthorized_client", async () => {
    expect(await oidcError(exchange(plain, { subject_token: await signIn() }))).toMatchObject({ error: "unauthorized_client", status: 400 });
  });

  it("refuses a public client, even with audiences in its record", async () => {
    const prisma = porta.services.db.prisma;
    const { client } = await createClient(prisma, org.id, { confidential: false, applicationType: "native", redirectUris: ["http://127.0.0.1/cb"], tokenExchangeAudiences: [API] });
    const config = await clientConfiguration(porta, org, client);
    expect(await oidcError(exchange(config, { subject_token: await signIn() }))).toMatchObject({ error: "unauthorized_client", status: 400 });
  });

  it("refuses a scope wider than the subject token's with invalid_scope", async () => {
    const answer = await oidcError(exchange(gateway.config, { subject_token: await signIn(), scope: "email roles" }));
    expect(answer).toMatchObject({ error: "invalid_scope", status: 400 });
  });

  it("refuses an expired, revoked, forged or other organization's subject token with invalid_grant", async () => {
    const prisma = porta.services.db.prisma;
    const expired = await signIn();
    // Expired: its stored record's lifetime has ended (as it would after its exp).
    await prisma.oidcPayload.updateMany({ where: { model: "AccessToken", accountId: userId, expiresAt: { gt: new Date() } }, data: { expiresAt: new Date(Date.now() - 1000) } });

    const revoked = await signIn();
    await oidc.tokenRevocation(rp, revoked);

    const genuine = await signIn();
    const [header, payload, signature] = genuine.split(".") as [string, string, string];
    const claims = JSON.parse(Buffer.from(payload, "base64url").toString()) as Record<string, unknown>;
    const forged = `${header}.${Buffer.from(JSON.stringify({ ...claims, sub: otherUserId })).toString("base64url")}.${signature}`;

    const foreign = await signIn(other, otherRp, otherUserId);

    for (const subject_token of [expired, revoked, forged, foreign, "not-a-token"]) {
      expect(await oidcError(exchange(gateway.config, { subject_token }))).toMatchObject({ error: "invalid_grant", status: 400 });
    }
    // The genuine token itself exchanges.
    expect((await exchange(gateway.config, { subject_token: genuine })).access_token).toBeTruthy();
  });

  it("refuses a client's own token as the subject and a bad actor token with invalid_grant", async () => {
    const own = (await oidc.clientCredentialsGrant(gateway.config)).access_token;
    expect(await oidcError(exchange(gateway.config, { subject_token: own }))).toMatchObject({ error: "invalid_grant" });
    expect(await oidcError(exchange(gateway.config, { subject_token: await signIn(), actor_token: "forged", actor_token_type: ACCESS_TOKEN }))).toMatchObject({ error: "invalid_grant" });
  });

  it("refuses unsupported token types with invalid_request", async () => {
    const subject_token = await signIn();
    expect(await oidcError(exchange(gateway.config, { subject_token, subject_token_type: "urn:ietf:params:oauth:token-type:id_token" }))).toMatchObject({ error: "invalid_request" });
    expect(await oidcError(exchange(gateway.config, { subject_token, requested_token_type: "urn:ietf:params:oauth:token-type:refresh_token" }))).toMatchObject({ error: "invalid_request" });
    expect(await oidcError(exchange(gateway.config, { subject_token: "" }))).toMatchObject({ error: "invalid_request" });
  });

  it("stops working for a person who is deactivated", async () => {
    const prisma = porta.services.db.prisma;
    const person = (await createUser(prisma, org.id)).id;
    const subject_token = await signIn(org, rp, person);
    await prisma.user.update({ where: { id: person }, data: { status: "inactive" } });
    await invalidateUser(porta.services.cache, person);
    expect(await oidcError(exchange(gateway.config, { subject_token }))).toMatchObject({ error: "invalid_grant" });
  });
});

describe("the token exchange policy through the Admin API", () => {
  it("sets a confidential client's audiences, which then exchange; a public client's are refused with 422", async () => {
    const { accessToken } = await obtainAdminTokens(porta);
    const api = adminApi(porta, accessToken);
    const created = await api.post<{ id: string; tokenExchangeAudiences: string[]; secret: { value: string } }>("/clients", {
      organizationId: org.id,
      name: "Exchanging service",
      clientType: "confidential",
      grantTypes: ["client_credentials"],
      scope: "openid",
      tokenExchangeAudiences: [API],
    });
    expect(created.status).toBe(201);
    expect(created.body.tokenExchangeAudiences).toEqual([API]);
    const config = await clientConfiguration(porta, org, { id: created.body.id }, { secret: created.body.secret.value });
    expect(decodeJwt((await exchange(config, { subject_token: await signIn() })).access_token)).toMatchObject({ aud: API, sub: userId });

    const publicClient = await api.post<{ fields: Array<{ field: string }> }>("/clients", {
      organizationId: org.id,
      name: "Public",
      clientType: "public",
      applicationType: "native",
      redirectUris: ["http://127.0.0.1/cb"],
      tokenExchangeAudiences: [API],
    });
    expect(publicClient.status).toBe(422);
    expect(JSON.stringify(publicClient.body)).toContain("tokenExchangeAudiences");

    const notUri = await api.put(`/clients/${created.body.id}`, { tokenExchangeAudiences: ["not a uri"] });
    expect(notUri.status).toBe(422);
  });
});
